// remote_tracking.cpp — a pushed ref's remote-tracking ref, through the
// remote's fetch refspecs (libgit2's refspec parser and transform), and its
// update after a push that landed.
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

Result<void> update_tracking_ref(const std::string& repo_path, const std::string& tracking, const std::string& oid,
                                 const std::string& ident_name, const std::string& ident_email) {
  git_oid id;
  if (oid.size() != GIT_OID_HEXSZ || git_oid_fromstr(&id, oid.c_str()) != 0) {
    return fail(Errc::invalid_argument, "malformed object id '" + oid + "'");
  }
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  if (git_oid_is_zero(&id)) {
    const int rc = git_reference_remove(repo->get(), tracking.c_str());
    if (rc != 0 && rc != GIT_ENOTFOUND) return tl::unexpected(git_failure("deleting " + tracking));
    return {};
  }
  // The reflog's committer, as git takes it (GIT_COMMITTER_*, user.*);
  // libgit2 alone would read only the repository's own file.
  if (!ident_name.empty() && !ident_email.empty()) {
    (void)git_repository_set_ident(repo->get(), ident_name.c_str(), ident_email.c_str());
  }
  git_reference* out = nullptr;
  if (git_reference_create(&out, repo->get(), tracking.c_str(), &id, 1, kTrackingReflogMessage) != 0) {
    return tl::unexpected(git_failure("updating " + tracking));
  }
  git_reference_free(out);
  return {};
}

}  // namespace courier::repo
