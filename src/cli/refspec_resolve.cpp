// refspec_resolve.cpp — a push refspec resolved against the local refs as
// git resolves it (see refspec_resolve.hpp).
#include "cli/refspec_resolve.hpp"

namespace courier::cli {

namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// git's count_refspec_match: how many local refs `pattern` names, a
// strong match (refs/heads/, refs/tags/, or spelled from refs/ or in
// full) winning over weak ones.
Result<std::optional<std::string>> match_source(const std::string& pattern, const repo::RefSnapshot& refs) {
  int strong = 0;
  int weak = 0;
  std::string strong_name;
  std::string weak_name;
  for (const auto& name : refs.refs) {
    if (!refname_matches(pattern, name)) continue;
    const bool full = name.size() == pattern.size() || name.size() == pattern.size() + 5;
    if (!full && !starts_with(name, "refs/heads/") && !starts_with(name, "refs/tags/")) {
      ++weak;
      weak_name = name;
    } else {
      ++strong;
      strong_name = name;
    }
  }
  const int count = strong ? strong : weak;
  if (count > 1) return fail(Errc::invalid_argument, "src refspec " + pattern + " matches more than one");
  if (count == 0) return std::optional<std::string>();
  return std::optional<std::string>(strong ? strong_name : weak_name);
}

struct NameTarget {
  std::string name;
  bool symbolic = false;
};

// git's resolve_ref_unsafe: the ref `name` ends at, following symbolic
// refs; nullopt when it is no ref (an expression, an id, an unborn branch).
std::optional<NameTarget> resolve_name(const repo::RefSnapshot& refs, const std::string& name) {
  NameTarget out{name, false};
  for (int hop = 0; hop < 5; ++hop) {
    auto it = refs.symbolic.find(out.name);
    if (it == refs.symbolic.end()) break;
    out.name = it->second;
    out.symbolic = true;
  }
  if (out.name == "HEAD") {
    if (refs.head_exists && refs.head_detached) return out;
    return std::nullopt;
  }
  if (refs.refs.count(out.name) == 0) return std::nullopt;
  return out;
}

// git's guess_ref: a short destination under the source's namespace.
std::optional<std::string> guess_ref(const std::string& dst, const repo::RefSnapshot& refs, const std::string& src) {
  auto r = resolve_name(refs, src);
  if (!r) return std::nullopt;
  if (starts_with(r->name, "refs/heads/")) return "refs/heads/" + dst;
  if (starts_with(r->name, "refs/tags/")) return "refs/tags/" + dst;
  return std::nullopt;
}

Error unqualified(const std::string& dst, const std::string& src) {
  return Error{Errc::invalid_argument,
               "The destination you provided is not a full refname (i.e., starting with \"refs/\"). The <src> "
               "being pushed ('" +
                   src +
                   "') is not a ref in \"refs/{heads,tags}/\", so no corresponding prefix can be added on the remote "
                   "side (git would also look for a ref that matches '" +
                   dst +
                   "' on the remote side; git-courier settles the destination before contacting the remote). You "
                   "must fully qualify the ref, e.g. '" +
                   src + ":refs/heads/" + dst + "'."};
}

}  // namespace

bool refname_matches(const std::string& short_name, const std::string& full) {
  for (const char* prefix : {"", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"}) {
    if (full == prefix + short_name) return true;
  }
  return full == "refs/remotes/" + short_name + "/HEAD";
}

Result<PushTarget> resolve_refspec(const Refspec& spec, const repo::RefSnapshot& refs, const ObjectProbe& probe) {
  auto matched = match_source(spec.src, refs);
  if (!matched) return tl::unexpected(matched.error());
  std::string src = matched->value_or(spec.src);
  if (!*matched && !probe(spec.src)) {
    return fail(Errc::invalid_argument, "src refspec " + spec.src + " does not match any");
  }
  std::string dst;
  if (spec.dst) {
    dst = *spec.dst;
  } else {
    auto r = resolve_name(refs, src);
    if (!r || (r->symbolic && !starts_with(r->name, "refs/heads/"))) {
      return fail(Errc::invalid_argument, src + " cannot be resolved to branch");
    }
    dst = r->name;
  }
  if (!starts_with(dst, "refs/")) {
    auto guessed = guess_ref(dst, refs, src);
    if (!guessed) return tl::unexpected(unqualified(dst, src));
    dst = *guessed;
  }
  return PushTarget{src, dst, spec.force};
}

}  // namespace courier::cli
