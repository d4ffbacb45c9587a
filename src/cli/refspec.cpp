// refspec.cpp — a push refspec read as git reads one (see refspec.hpp).
#include "cli/refspec.hpp"

namespace courier::cli {

namespace {

constexpr std::string_view kOneRef = "git-courier delivers the refs it is given by name: name each";

bool bad_refname_byte(char ch) {
  const auto b = static_cast<unsigned char>(ch);
  return b < 0x20 || b == 0x7f || std::string_view(" ~^:?*[\\").find(ch) != std::string_view::npos;
}

bool valid_component(std::string_view c) {
  if (c.empty() || c.front() == '.') return false;
  return !(c.size() >= 5 && c.substr(c.size() - 5) == ".lock");
}

Error refused(const std::string& message) { return Error{Errc::invalid_argument, message}; }

tl::unexpected<Error> refusal(const std::string& message) { return tl::unexpected(refused(message)); }

Error invalid(const std::string& text) { return refused("invalid refspec '" + text + "'"); }

}  // namespace

bool is_refname_format(std::string_view name) {
  if (name.empty() || name == "@" || name.back() == '/' || name.back() == '.') return false;
  if (name.find("..") != std::string_view::npos || name.find("@{") != std::string_view::npos) return false;
  for (const char ch : name) {
    if (bad_refname_byte(ch)) return false;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = name.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? name.size() : slash;
    if (!valid_component(name.substr(start, end - start))) return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

Result<Refspec> parse_refspec(const std::string& text) {
  Refspec out;
  out.text = text;
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == '+') {
    out.force = true;
    rest.remove_prefix(1);
  } else if (!rest.empty() && rest.front() == '^') {
    return refusal("refspec '" + text +
                   "' is a negative refspec: git would leave the refs it matches out of the ones it pushes; " +
                   std::string(kOneRef) + " (e.g. git courier push origin main)");
  }
  const std::size_t colon = rest.rfind(':');
  if (rest == ":") {
    return refusal("refspec '" + text +
                   "' pushes \"matching\" refs: git would push every branch that has a branch of the same name on "
                   "the remote; " +
                   std::string(kOneRef) + " (e.g. git courier push origin main)");
  }
  std::string src(rest.substr(0, colon));
  if (colon != std::string_view::npos) out.dst = std::string(rest.substr(colon + 1));
  if (src.find('*') != std::string::npos || (out.dst && out.dst->find('*') != std::string::npos)) {
    return refusal("refspec '" + text + "' has a wildcard: git would push every ref it matches; " +
                   std::string(kOneRef) + " (e.g. git courier push origin main)");
  }
  if (out.dst && out.dst->empty()) return tl::unexpected(invalid(text));
  if (out.dst && !is_refname_format(*out.dst)) return tl::unexpected(invalid(text));
  if (src.empty() && out.dst) {
    if (out.force) return tl::unexpected(invalid(text));  // git: "+:dst" is no refspec either
    out.deletes = true;
    return out;
  }
  if (src == "@") src = "HEAD";
  // Without ':' the source is also the destination's name, so it must be
  // a ref's name (git: "invalid refspec 'main~1'").
  if (src.empty() || (!out.dst && !is_refname_format(src))) return tl::unexpected(invalid(text));
  out.src = std::move(src);
  return out;
}

Result<Refspec> parse_delete_refspec(const std::string& text) {
  if (text.find(':') != std::string::npos) return refusal("--delete only accepts plain target ref names");
  if (!is_refname_format(text)) return tl::unexpected(invalid(text));
  Refspec out;
  out.text = text;
  out.deletes = true;
  out.dst = text;
  return out;
}

Error several_refspecs(const std::vector<std::string>& refspecs) {
  std::string listed;
  for (const auto& r : refspecs) listed += (listed.empty() ? "'" : " '") + r + "'";
  return refused(
      std::to_string(refspecs.size()) + " refspecs (" + listed +
      "): git would push each of them; give them on the command line (git courier push REMOTE A B ...), which "
      "git-courier pushes as one delivery");
}

}  // namespace courier::cli
