// local_refs.cpp — the local refs read once with libgit2 (see local_refs.hpp).
#include "repo/local_refs.hpp"

#include "repo/repository.hpp"

namespace courier::repo {

namespace {

struct RefDeleter {
  void operator()(git_reference* r) const { git_reference_free(r); }
};
struct IteratorDeleter {
  void operator()(git_reference_iterator* i) const { git_reference_iterator_free(i); }
};
using Ref = std::unique_ptr<git_reference, RefDeleter>;
using RefIterator = std::unique_ptr<git_reference_iterator, IteratorDeleter>;

void note(RefSnapshot& out, git_reference* ref) {
  const std::string name = git_reference_name(ref);
  if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) out.symbolic[name] = git_reference_symbolic_target(ref);
  if (name.rfind("refs/", 0) == 0) out.refs.insert(name);
}

}  // namespace

std::optional<std::string> RefSnapshot::current_branch() const {
  auto head = symbolic.find("HEAD");
  if (head == symbolic.end() || head->second.rfind("refs/heads/", 0) != 0) return std::nullopt;
  return head->second;
}

Result<RefSnapshot> read_refs(const std::string& repo_path) {
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  RefSnapshot out;
  git_reference_iterator* raw_iter = nullptr;
  if (git_reference_iterator_new(&raw_iter, repo->get()) != 0) return tl::unexpected(git_failure("reading refs"));
  RefIterator iter(raw_iter);
  git_reference* raw = nullptr;
  int rc = 0;
  while ((rc = git_reference_next(&raw, iter.get())) == 0) {
    Ref ref(raw);
    note(out, ref.get());
  }
  if (rc != GIT_ITEROVER) return tl::unexpected(git_failure("reading refs"));
  if (git_reference_lookup(&raw, repo->get(), "HEAD") == 0) {
    Ref head(raw);
    note(out, head.get());
    out.head_detached = git_reference_type(head.get()) == GIT_REFERENCE_DIRECT;
  } else {
    out.head_exists = false;
  }
  return out;
}

bool names_object(const std::string& repo, const std::string& rev) {
  if (!check_bounded_revision("refspec", rev)) return false;
  return resolve_revision(repo, rev).has_value();
}

}  // namespace courier::repo
