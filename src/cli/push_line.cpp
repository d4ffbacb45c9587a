// push_line.cpp — git's `push [<remote> [<refspec>]]` settled into the
// long options (see push_line.hpp).
#include "cli/push_line.hpp"

#include "cli/push_default.hpp"
#include "cli/refspec.hpp"
#include "cli/refspec_resolve.hpp"
#include "cli/remote_name.hpp"
#include "repo/discover.hpp"
#include "repo/git_config.hpp"
#include "repo/local_refs.hpp"

namespace courier::cli {

namespace {

bool full_ref(const std::string& ref) { return ref.rfind("refs/", 0) == 0; }

// The long form already says everything: the repository is only found.
bool long_form_complete(const PushArgs& a) {
  return a.positional.empty() && !a.remote.empty() && full_ref(a.ref) && (a.rev || a.oid);
}

// What git's push would push: the refspec word, the long options as one
// (--rev/--oid SRC with --ref DST), or the configured default.
Result<std::string> refspec_text(const PushArgs& a, const repo::GitConfig& config, const repo::RefSnapshot& refs,
                                 const ResolvedRemote& remote) {
  if (a.positional.size() == 2) return a.positional[1];
  if (a.rev || a.oid) return (a.rev ? *a.rev : *a.oid) + (a.ref.empty() ? "" : ":" + a.ref);
  return default_push_refspec(config, refs, remote.name.value_or(a.remote), remote.name.has_value());
}

// The remote's word: the positional one, --remote, or git's default.
Result<void> settle_remote(PushArgs& a, const repo::GitConfig& config, const repo::RefSnapshot& refs) {
  if (!a.positional.empty()) a.remote = a.positional[0];
  if (!a.remote.empty()) return {};
  auto word = default_push_remote(config, refs);
  if (!word) return tl::unexpected(word.error());
  a.remote = *word;
  return {};
}

// The refspec resolved into --rev, --ref and, for '+', --force (a lease or
// an expected id given as well decides instead, as in git).
Result<void> settle_refspec(PushArgs& a, const std::string& text, const repo::RefSnapshot& refs) {
  auto spec = parse_refspec(text);
  if (!spec) return tl::unexpected(spec.error());
  const std::string repo = a.repo;
  auto target = resolve_refspec(*spec, refs, [&repo](const std::string& rev) { return repo::names_object(repo, rev); });
  if (!target) return tl::unexpected(target.error());
  if (!a.oid) a.rev = target->src;
  a.ref = target->dst;
  if (target->force && !a.lease && !a.expect_old) a.force = true;
  return {};
}

// The remote ref a deletion names: a full name as given; a short one is
// the local branch or tag of that name, else the branch of that name (git
// matches it against the remote's refs, which this command does not read
// before it settles the request; a branch the remote lacks is then refused
// as git refuses it, "remote ref does not exist").
Result<std::string> deletion_target(const std::string& dst, const repo::RefSnapshot& refs) {
  if (full_ref(dst)) return dst;
  const bool branch = refs.refs.count("refs/heads/" + dst) != 0;
  const bool tag = refs.refs.count("refs/tags/" + dst) != 0;
  if (branch && tag) return fail(Errc::invalid_argument, "dst refspec " + dst + " matches more than one");
  return (tag ? "refs/tags/" : "refs/heads/") + dst;
}

// One refspec of several (or a deletion) into a RefArg.
Result<RefArg> settle_ref(const PushArgs& a, const std::string& text, const repo::RefSnapshot& refs) {
  auto spec = a.delete_refs ? parse_delete_refspec(text) : parse_refspec(text);
  if (!spec) return tl::unexpected(spec.error());
  if (spec->deletes) {
    auto dst = deletion_target(*spec->dst, refs);
    if (!dst) return tl::unexpected(dst.error());
    return RefArg{*dst, std::nullopt, spec->force};
  }
  const std::string repo = a.repo;
  auto target = resolve_refspec(*spec, refs, [&repo](const std::string& rev) { return repo::names_object(repo, rev); });
  if (!target) return tl::unexpected(target.error());
  return RefArg{target->dst, target->src, target->force};
}

// Several refspecs, or any deletion: each settled into `refs`, in order.
bool is_ref_set(const PushArgs& a) {
  if (a.positional.size() > 2 || a.delete_refs) return true;
  if (a.positional.size() < 2) return false;
  auto spec = parse_refspec(a.positional[1]);
  return spec && spec->deletes;
}

Result<void> settle_refs(PushArgs& a, const repo::RefSnapshot& refs) {
  for (std::size_t i = 1; i < a.positional.size(); ++i) {
    auto one = settle_ref(a, a.positional[i], refs);
    if (!one) return tl::unexpected(one.error());
    a.refs.push_back(std::move(*one));
  }
  return {};
}

}  // namespace

Result<PushArgs> settle_push_line(PushArgs a) {
  auto found = repo::discover_repository(a.repo.empty() ? std::nullopt : std::optional<std::string>(a.repo));
  if (long_form_complete(a)) {
    // As before: a repository that cannot be found is said by the request's
    // own checks, with every other refused field.
    if (found) a.repo = *found;
    return a;
  }
  if (!found) return tl::unexpected(found.error());
  a.repo = *found;
  auto config = repo::GitConfig::open(a.repo);
  if (!config) return tl::unexpected(config.error());
  auto refs = repo::read_refs(a.repo);
  if (!refs) return tl::unexpected(refs.error());
  if (auto ok = settle_remote(a, *config, *refs); !ok) return tl::unexpected(ok.error());
  if (is_ref_set(a)) {
    if (auto ok = settle_refs(a, *refs); !ok) return tl::unexpected(ok.error());
    a.positional.clear();
    return a;
  }
  // A full --ref, or --oid with a short one (the request's checks say it
  // is not a full ref name), is judged as the long form always was.
  if (a.positional.size() < 2 && (a.rev || a.oid) && (full_ref(a.ref) || (a.oid && !a.ref.empty()))) {
    a.positional.clear();
    return a;
  }
  auto resolved = resolve_remote(a.remote, *config);
  // A remote that cannot be read is refused by the request's checks.
  ResolvedRemote remote = resolved ? *resolved : ResolvedRemote{std::nullopt, a.remote};
  auto text = refspec_text(a, *config, *refs, remote);
  if (!text) return tl::unexpected(text.error());
  if (auto ok = settle_refspec(a, *text, *refs); !ok) return tl::unexpected(ok.error());
  a.positional.clear();
  return a;
}

}  // namespace courier::cli
