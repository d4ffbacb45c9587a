// submission_set.cpp — the set of ref updates a submission carries, as the
// journal keeps it (the `request` column) and as J4 identifies it.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "journal/journal.hpp"
#include "wire/json.hpp"

namespace courier::journal {

using nlohmann::json;

namespace {

json update_json(const RefUpdate& u) {
  return {{"ref", u.ref},
          {"oid", u.oid},
          {"update", std::string(update_mode_word(u.update))},
          {"expect_old", u.expect_old ? json(*u.expect_old) : json(nullptr)}};
}

std::optional<RefUpdate> update_from(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto text = [&](const char* key) -> std::optional<std::string> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  RefUpdate u;
  auto ref = text("ref");
  auto oid = text("oid");
  auto mode = update_mode_from_word(text("update").value_or(""));
  if (!ref || !oid || !mode) return std::nullopt;
  u.ref = *ref;
  u.oid = *oid;
  u.update = *mode;
  u.expect_old = text("expect_old");
  return u;
}

// The set as one JSON value, updates in the given order.
json set_json(const std::vector<RefUpdate>& updates, bool atomic, const std::vector<std::string>& push_options) {
  json list = json::array();
  for (const RefUpdate& u : updates) list.push_back(update_json(u));
  return {{"updates", std::move(list)}, {"atomic", atomic}, {"push_options", push_options}};
}

void read_legacy(Submission& s) {
  s.updates = {RefUpdate{s.ref, s.oid, s.expect_old ? UpdateMode::expect_old : UpdateMode::fast_forward, s.expect_old}};
  s.atomic = false;
  s.push_options.clear();
  s.legacy_set = true;
}

bool read_set(const json& j, Submission& s) {
  if (!j.is_object()) return false;
  const auto updates = j.find("updates");
  if (updates == j.end() || !updates->is_array() || updates->empty()) return false;
  std::vector<RefUpdate> read;
  for (const json& one : *updates) {
    auto u = update_from(one);
    if (!u) return false;
    read.push_back(std::move(*u));
  }
  const auto atomic = j.find("atomic");
  const auto options = j.find("push_options");
  s.atomic = atomic != j.end() && atomic->is_boolean() && atomic->get<bool>();
  s.push_options.clear();
  if (options != j.end() && options->is_array()) {
    for (const json& o : *options) {
      if (o.is_string()) s.push_options.push_back(o.get<std::string>());
    }
  }
  s.updates = std::move(read);
  s.legacy_set = false;
  return true;
}

}  // namespace

std::string request_detail(const Submission& s) {
  return set_json(s.updates, s.atomic, s.push_options).dump(-1, ' ', false, json::error_handler_t::replace);
}

void read_request(const std::optional<std::string>& column, Submission& s) {
  if (column && !column->empty()) {
    auto j = wire::parse_json(*column, "the request");
    if (j && read_set(*j, s)) return;
  }
  read_legacy(s);
}

std::string set_identity(const Submission& s) {
  std::vector<RefUpdate> sorted = s.updates;
  std::sort(sorted.begin(), sorted.end(), [](const RefUpdate& a, const RefUpdate& b) { return a.ref < b.ref; });
  return set_json(sorted, s.atomic, s.push_options).dump(-1, ' ', false, json::error_handler_t::replace);
}

bool same_set(const Submission& known, const Submission& asked) {
  if (known.legacy_set || asked.legacy_set) {
    // The row names one ref and its object, no rule: the same request is
    // one update of that ref to that object.
    const Submission& legacy = known.legacy_set ? known : asked;
    const Submission& other = known.legacy_set ? asked : known;
    return other.updates.size() == 1 && other.updates[0].ref == legacy.ref && other.updates[0].oid == legacy.oid &&
           other.push_options.empty();
  }
  // A retry in the default rule (fast-forward, no expect_old) is the
  // request first given, in whatever rule that was: a host retrying an id
  // after `possible` need not repeat --force (the compare-and-swap on the
  // journalled old id decides, J4).
  Submission retry = asked;
  for (RefUpdate& u : retry.updates) {
    if (u.update != UpdateMode::fast_forward || u.expect_old) continue;
    for (const RefUpdate& k : known.updates) {
      if (k.ref == u.ref && k.oid == u.oid) {
        u.update = k.update;
        u.expect_old = k.expect_old;
      }
    }
  }
  return set_identity(known) == set_identity(retry);
}

}  // namespace courier::journal
