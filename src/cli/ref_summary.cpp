// ref_summary.cpp — git push's per-ref summary (see ref_summary.hpp).
#include "cli/ref_summary.hpp"

namespace courier::cli {

namespace {

bool is_zero(const std::optional<std::string>& oid) {
  return !oid || oid->empty() || oid->find_first_not_of('0') == std::string::npos;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// git's "[new branch]", "[new tag]", "[new reference]".
std::string new_ref_word(const std::string& ref) {
  if (starts_with(ref, "refs/heads/")) return "[new branch]";
  if (starts_with(ref, "refs/tags/")) return "[new tag]";
  return "[new reference]";
}

// git's print_ref_status: " F SUMMARY(width 17) NAMES (REASON)".
std::string line(char flag, std::string summary, const std::string& names, const std::string& reason) {
  if (summary.size() < 17) summary.resize(17, ' ');
  std::string out = std::string(" ") + flag + " " + summary + " " + names;
  if (!reason.empty()) out += " (" + reason + ")";
  return out;
}

std::string names_of(const AskedRef& a, const RefOutcome& r) {
  if (a.src.empty()) return short_ref(r.ref);
  return short_ref(a.src) + " -> " + short_ref(r.ref);
}

std::string ok_line(const AskedRef& a, const RefOutcome& r, bool forced) {
  const std::string names = names_of(a, r);
  if (r.oid.find_first_not_of('0') == std::string::npos) return line('-', "[deleted]", names, "");
  if (is_zero(r.old_oid)) return line('*', new_ref_word(r.ref), names, "");
  const std::string from = r.old_oid->substr(0, 7);
  const std::string to = r.oid.substr(0, 7);
  if (forced) return line('+', from + "..." + to, names, "forced update");
  return line(' ', from + ".." + to, names, "");
}

std::string ref_line(const AskedRef& a, const RefOutcome& r, bool forced) {
  const std::string names = names_of(a, r);
  switch (r.status) {
    case RefStatus::ok:
      return ok_line(a, r, forced);
    case RefStatus::up_to_date:
      return line('=', "[up to date]", names, "");
    case RefStatus::ng:
      return line('!', "[remote rejected]", names, r.reason);
    case RefStatus::rejected:
      return line('!', "[rejected]", names, r.reason);
    case RefStatus::not_attempted:
      return line('!', r.reason == "atomic push failed" ? "[rejected]" : "[not attempted]", names,
                  r.reason.empty() ? "no command was sent for it" : r.reason);
    case RefStatus::unknown:
      return line('?', "[unknown]", names, "its command was sent and no answer read: the remote may have applied it");
  }
  return line('?', "[unknown]", names, r.reason);
}

}  // namespace

std::string short_ref(const std::string& ref) {
  for (std::string_view prefix : {"refs/heads/", "refs/tags/", "refs/remotes/"}) {
    if (starts_with(ref, prefix)) return ref.substr(prefix.size());
  }
  return ref;
}

std::vector<std::string> ref_summary(const std::string& remote, const std::vector<AskedRef>& asked,
                                     const std::vector<RefOutcome>& refs, const ForcedProbe& forced) {
  std::vector<std::string> out{"To " + remote};
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const AskedRef a = i < asked.size() ? asked[i] : AskedRef{refs[i].ref, refs[i].ref, UpdateMode::fast_forward};
    const bool was_forced = refs[i].status == RefStatus::ok && forced && forced(a, refs[i]);
    out.push_back(ref_line(a, refs[i], was_forced));
  }
  return out;
}

bool any_ref_refused(const std::vector<RefOutcome>& refs) {
  for (const auto& r : refs) {
    if (r.status == RefStatus::ng || r.status == RefStatus::rejected) return true;
  }
  return false;
}

}  // namespace courier::cli
