// remote_tracking.cpp — a pushed ref's remote-tracking ref, through the
// remote's fetch refspecs (libgit2's refspec parser and transform).
#include "repo/remote_tracking.hpp"

#include <git2.h>

#include <memory>

#include "repo/repository.hpp"

namespace courier::repo {

namespace {

struct RefspecDeleter {
  void operator()(git_refspec* r) const { git_refspec_free(r); }
};
using Refspec = std::unique_ptr<git_refspec, RefspecDeleter>;

Result<Refspec> parse_fetch_refspec(const std::string& text) {
  git_refspec* raw = nullptr;
  if (git_refspec_parse(&raw, text.c_str(), 1) != 0) {
    return fail(Errc::invalid_argument, "invalid fetch refspec '" + text + "'");
  }
  return Refspec(raw);
}

}  // namespace

Result<std::optional<TrackingRef>> remote_tracking(const std::string& repo_path, const std::vector<std::string>& fetch,
                                                   const std::string& remote_ref) {
  init_libgit2();
  std::optional<std::string> mapped;
  for (const auto& text : fetch) {
    if (!text.empty() && text.front() == '^') {
      // A negative refspec names sources only, never a destination.
      auto spec = parse_fetch_refspec(text.substr(1));
      if (!spec) return tl::unexpected(spec.error());
      if (git_refspec_src_matches(spec->get(), remote_ref.c_str())) return std::optional<TrackingRef>{};
      continue;
    }
    auto spec = parse_fetch_refspec(text);
    if (!spec) return tl::unexpected(spec.error());
    if (mapped || !git_refspec_src_matches(spec->get(), remote_ref.c_str())) continue;
    if (git_refspec_dst(spec->get()) == nullptr || *git_refspec_dst(spec->get()) == '\0') continue;
    git_buf out = GIT_BUF_INIT;
    if (git_refspec_transform(&out, spec->get(), remote_ref.c_str()) != 0) {
      git_buf_dispose(&out);
      return tl::unexpected(git_failure("mapping " + remote_ref + " through '" + text + "'"));
    }
    mapped = std::string(out.ptr, out.size);
    git_buf_dispose(&out);
  }
  if (!mapped) return std::optional<TrackingRef>{};
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  TrackingRef t{*mapped, std::nullopt};
  git_oid id;
  const int rc = git_reference_name_to_id(&id, repo->get(), mapped->c_str());
  if (rc == 0) {
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &id);
    t.oid = std::string(hex);
  } else if (rc != GIT_ENOTFOUND) {
    return tl::unexpected(git_failure("reading " + *mapped));
  }
  return std::optional<TrackingRef>{t};
}

}  // namespace courier::repo
