// messages.cpp — strict JSON codec for protocol messages. The only place
// nlohmann/json is used for the protocol; its exceptions end here.
#include "protocol/messages.hpp"

#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/frame.hpp"
#include "wire/json.hpp"

namespace courier::protocol {

using nlohmann::json;

namespace {

// Reads fields off one JSON object, remembering which it consumed so that any field left over is reported as unknown.
class Fields {
 public:
  Fields(const json& obj, std::string type) : obj_(obj), type_(std::move(type)) { seen_.insert("type"); }

  template <class T>
  Result<T> req(const char* name) {
    auto it = obj_.find(name);
    if (it == obj_.end()) {
      return fail(Errc::missing_field, type_ + ": missing field '" + name + "'");
    }
    seen_.insert(name);
    return convert<T>(name, *it);
  }

  template <class T>
  Result<std::optional<T>> opt(const char* name) {
    auto it = obj_.find(name);
    if (it == obj_.end()) return std::optional<T>{};
    seen_.insert(name);
    auto v = convert<T>(name, *it);
    if (!v) return tl::unexpected(v.error());
    return std::optional<T>{std::move(*v)};
  }

  Result<void> no_extra() const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      if (!seen_.count(it.key())) {
        return fail(Errc::unknown_field, type_ + ": unknown field '" + it.key() + "'");
      }
    }
    return {};
  }

 private:
  template <class T>
  Result<T> convert(const char* name, const json& v) {
    auto wrong = [&](const char* want) {
      return fail(Errc::wrong_type, type_ + ": field '" + name + "' must be " + want);
    };
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) return wrong("a string");
      return v.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) return wrong("a boolean");
      return v.get<bool>();
    } else if constexpr (std::is_same_v<T, int>) {
      if (!v.is_number_integer()) return wrong("an integer");
      const auto x = v.get<std::int64_t>();
      if (x < INT32_MIN || x > INT32_MAX) return wrong("a 32-bit integer");
      return static_cast<int>(x);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)) {
        return wrong("a signed 64-bit integer");
      }
      return v.get<std::int64_t>();
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
        return wrong("a non-negative integer");
      }
      return v.get<std::uint64_t>();
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      if (!v.is_array()) return wrong("an array of strings");
      std::vector<std::string> out;
      for (const auto& e : v) {
        if (!e.is_string()) return wrong("an array of strings");
        out.push_back(e.get<std::string>());
      }
      return out;
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
      if (!v.is_object()) return wrong("an object of strings");
      std::map<std::string, std::string> out;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it->is_string()) return wrong("an object of strings");
        out.emplace(it.key(), it->get<std::string>());
      }
      return out;
    } else if constexpr (std::is_same_v<T, json>) {
      if (!v.is_object()) return wrong("an object");
      return v;
    } else if constexpr (std::is_same_v<T, std::vector<json>>) {
      if (!v.is_array()) return wrong("an array of objects");
      std::vector<json> out;
      for (const auto& e : v) {
        if (!e.is_object()) return wrong("an array of objects");
        out.push_back(e);
      }
      return out;
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!v.is_array()) return wrong("an array of integers");
      std::vector<int> out;
      for (const auto& e : v) {
        if (!e.is_number_integer()) return wrong("an array of integers");
        const auto x = e.get<std::int64_t>();
        if (x < 0 || x > INT32_MAX) return wrong("an array of descriptor numbers");
        out.push_back(static_cast<int>(x));
      }
      return out;
    }
  }

  const json& obj_;
  std::string type_;
  std::set<std::string> seen_;
};

// Shorthand: pull a field or return its error.
#define COURIER_TRY_FIELD(dst, expr)                            \
  do {                                                          \
    auto courier_v_ = (expr);                                   \
    if (!courier_v_) return tl::unexpected(courier_v_.error()); \
    (dst) = std::move(*courier_v_);                             \
  } while (0)

Result<void> nonempty(const std::string& type, const char* field, const std::string& v) {
  if (v.empty()) return fail(Errc::invalid_value, type + ": field '" + field + "' must not be empty");
  return {};
}

Result<json> parse_object(std::string_view text) {
  if (!is_valid_utf8(text)) return fail(Errc::invalid_utf8, "message is not valid UTF-8");
  // The one bounded reader: a key twice in one object ({"status":"failed",
  // "status":"delivered"} would read as delivered with nlohmann/json alone),
  // nesting past wire::kMaxJsonDepth and text past wire::kMaxJsonBytes all
  // make the whole message an error.
  auto parsed = wire::parse_json(text, "message");
  if (!parsed) return tl::unexpected(parsed.error());
  json j = std::move(*parsed);
  if (!j.is_object()) return fail(Errc::malformed_json, "message is not a JSON object");
  auto t = j.find("type");
  if (t == j.end()) return fail(Errc::missing_field, "message: missing field 'type'");
  if (!t->is_string()) return fail(Errc::wrong_type, "message: field 'type' must be a string");
  return j;
}

Result<std::string> dump(const json& j) {
  try {
    return j.dump(-1, ' ', false, json::error_handler_t::strict);
  } catch (const json::exception& e) {
    return fail(Errc::invalid_value, std::string("cannot encode message: ") + e.what());
  }
}

template <class T>
void put_opt(json& j, const char* name, const std::optional<T>& v) {
  if (v) j[name] = *v;
}

// ---- per-message decoders -------------------------------------------------

Result<ChildMessage> decode_hello(Fields& f) {
  Hello m;
  COURIER_TRY_FIELD(m.version, f.req<int>("version"));
  COURIER_TRY_FIELD(m.pid, f.req<std::int64_t>("pid"));
  COURIER_TRY_FIELD(m.argv, f.req<std::vector<std::string>>("argv"));
  COURIER_TRY_FIELD(m.env_keys, f.req<std::vector<std::string>>("env_keys"));
  COURIER_TRY_FIELD(m.fds, f.opt<std::vector<int>>("fds"));
  if (m.pid <= 0) return fail(Errc::invalid_value, "hello: field 'pid' must be positive");
  return m;
}

Result<ChildMessage> decode_mint(Fields& f) {
  Mint m;
  COURIER_TRY_FIELD(m.leg, f.req<std::string>("leg"));
  COURIER_TRY_FIELD(m.method, f.req<std::string>("method"));
  COURIER_TRY_FIELD(m.url, f.req<std::string>("url"));
  COURIER_TRY_FIELD(m.body_sha256, f.opt<std::string>("body_sha256"));
  COURIER_TRY_FIELD(m.body_len, f.opt<std::uint64_t>("body_len"));
  if (m.leg != kLegAdvertisement && m.leg != kLegReceivePack) {
    return fail(Errc::invalid_value, "mint: field 'leg' must be 'advertisement' or 'receive-pack'");
  }
  if (m.method != "GET" && m.method != "POST") {
    return fail(Errc::invalid_value, "mint: field 'method' must be 'GET' or 'POST'");
  }
  if (auto r = nonempty("mint", "url", m.url); !r) return tl::unexpected(r.error());
  return m;
}

Result<ChildMessage> decode_check(Fields& f) {
  Check m;
  COURIER_TRY_FIELD(m.phase, f.req<std::string>("phase"));
  std::optional<OldOids> old_oids;
  COURIER_TRY_FIELD(old_oids, f.opt<OldOids>("old_oids"));
  m.old_oids = old_oids.value_or(OldOids{});
  if (auto r = nonempty("check", "phase", m.phase); !r) return tl::unexpected(r.error());
  return m;
}

Result<ChildMessage> decode_progress(Fields& f) {
  Progress m;
  COURIER_TRY_FIELD(m.phase, f.req<std::string>("phase"));
  COURIER_TRY_FIELD(m.done, f.req<std::uint64_t>("done"));
  COURIER_TRY_FIELD(m.total, f.req<std::uint64_t>("total"));
  COURIER_TRY_FIELD(m.message, f.opt<std::string>("message"));
  std::optional<OldOids> old_oids;
  COURIER_TRY_FIELD(old_oids, f.opt<OldOids>("old_oids"));
  m.old_oids = old_oids.value_or(OldOids{});
  COURIER_TRY_FIELD(m.pack_engine, f.opt<std::string>("pack_engine"));
  if (m.pack_engine && *m.pack_engine != "libgit2" && *m.pack_engine != "git") {
    return fail(Errc::invalid_value, "progress: field 'pack_engine' must be libgit2 or git");
  }
  return m;
}

template <class Out, class Decoder>
Result<Out> finish(Fields& f, Decoder&& d);

Result<RefResult> decode_ref_result_fields(Fields& f) {
  RefResult m;
  std::string status;
  COURIER_TRY_FIELD(m.ref, f.req<std::string>("ref"));
  COURIER_TRY_FIELD(status, f.req<std::string>("status"));
  COURIER_TRY_FIELD(m.reason, f.opt<std::string>("reason"));
  COURIER_TRY_FIELD(m.old_oid, f.opt<std::string>("old_oid"));
  const auto known = enum_from_word<RefStatus>(status);
  if (!known) return fail(Errc::invalid_value, "result.refs: field 'status' has unknown value '" + status + "'");
  m.status = *known;
  if (auto r = nonempty("result.refs", "ref", m.ref); !r) return tl::unexpected(r.error());
  return m;
}

Result<RefResult> decode_ref_result(const json& j) {
  Fields f(j, "result.refs");
  return finish<RefResult>(f, decode_ref_result_fields);
}

Result<RefUpdate> decode_update_fields(Fields& f) {
  RefUpdate m;
  std::string update;
  COURIER_TRY_FIELD(m.ref, f.req<std::string>("ref"));
  COURIER_TRY_FIELD(m.oid, f.req<std::string>("oid"));
  COURIER_TRY_FIELD(update, f.req<std::string>("update"));
  COURIER_TRY_FIELD(m.expect_old, f.opt<std::string>("expect_old"));
  const auto mode = update_mode_from_word(update);
  if (!mode) return fail(Errc::invalid_value, "job.updates: field 'update' has unknown value '" + update + "'");
  m.update = *mode;
  if (m.update == UpdateMode::expect_old && !m.expect_old) {
    return fail(Errc::missing_field, "job.updates: missing field 'expect_old' (required for update expect_old)");
  }
  for (auto [name, v] : {std::pair{"ref", &m.ref}, {"oid", &m.oid}}) {
    if (auto r = nonempty("job.updates", name, *v); !r) return tl::unexpected(r.error());
  }
  return m;
}

// The job's updates: at least one, at most kMaxRefUpdates, no ref twice.
Result<std::vector<RefUpdate>> decode_updates(const std::vector<json>& list) {
  if (list.empty()) return fail(Errc::invalid_value, "job: field 'updates' must not be empty");
  if (list.size() > kMaxRefUpdates) return fail(Errc::invalid_value, "job: field 'updates' has too many entries");
  std::vector<RefUpdate> out;
  std::set<std::string> refs;
  for (const json& j : list) {
    Fields f(j, "job.updates");
    auto u = finish<RefUpdate>(f, decode_update_fields);
    if (!u) return tl::unexpected(u.error());
    if (!refs.insert(u->ref).second) return fail(Errc::invalid_value, "job: ref '" + u->ref + "' is updated twice");
    out.push_back(std::move(*u));
  }
  return out;
}

Result<ChildMessage> decode_result(Fields& f) {
  ResultMsg m;
  std::string status;
  COURIER_TRY_FIELD(status, f.req<std::string>("status"));
  std::vector<json> refs;
  COURIER_TRY_FIELD(refs, f.req<std::vector<json>>("refs"));
  for (const json& r : refs) {
    auto one = decode_ref_result(r);
    if (!one) return tl::unexpected(one.error());
    m.refs.push_back(std::move(*one));
  }
  if (m.refs.empty()) return fail(Errc::invalid_value, "result: field 'refs' must not be empty");
  COURIER_TRY_FIELD(m.reason, f.opt<std::string>("reason"));
  COURIER_TRY_FIELD(m.detail, f.opt<std::string>("detail"));
  COURIER_TRY_FIELD(m.objects, f.opt<std::uint64_t>("objects"));
  COURIER_TRY_FIELD(m.bytes_sent, f.opt<std::uint64_t>("bytes_sent"));
  COURIER_TRY_FIELD(m.pack_engine, f.opt<std::string>("pack_engine"));
  if (m.pack_engine && *m.pack_engine != "libgit2" && *m.pack_engine != "git") {
    return fail(Errc::invalid_value, "result: field 'pack_engine' must be libgit2 or git");
  }
  COURIER_TRY_FIELD(m.advertise_ms, f.opt<std::uint64_t>("advertise_ms"));
  COURIER_TRY_FIELD(m.pack_ms, f.opt<std::uint64_t>("pack_ms"));
  COURIER_TRY_FIELD(m.upload_ms, f.opt<std::uint64_t>("upload_ms"));
  std::optional<std::vector<std::string>> messages;
  COURIER_TRY_FIELD(messages, f.opt<std::vector<std::string>>("remote_messages"));
  if (messages) {
    if (messages->size() > kMaxRemoteMessages) {
      return fail(Errc::invalid_value,
                  "result: field 'remote_messages' has more than " + std::to_string(kMaxRemoteMessages) + " lines");
    }
    m.remote_messages = std::move(*messages);
  }
  COURIER_TRY_FIELD(m.remote_messages_dropped, f.opt<std::uint64_t>("remote_messages_dropped"));
  const auto known = wire::status_from_word(status);
  if (!known) return fail(Errc::invalid_value, "result: field 'status' has unknown value '" + status + "'");
  m.status = *known;
  return m;
}

Result<std::optional<SshJob>> decode_ssh_job(Fields& f) {
  std::optional<json> raw;
  COURIER_TRY_FIELD(raw, f.opt<json>("ssh"));
  if (!raw) return std::optional<SshJob>{};
  Fields g(*raw, "job.ssh");
  SshJob s;
  for (auto [name, v] : {std::pair{"program", &s.program},
                         {"agent_socket", &s.agent_socket},
                         {"known_hosts", &s.known_hosts},
                         {"identity", &s.identity},
                         {"host_key_alias", &s.host_key_alias}}) {
    COURIER_TRY_FIELD(*v, g.req<std::string>(name));
    const bool alias = v == &s.host_key_alias;  // every field a path but this name
    if (v->empty() || (!alias && v->front() != '/')) {
      return fail(Errc::invalid_value,
                  std::string("job: field 'ssh.") + name + "' must be " + (alias ? "non-empty" : "an absolute path"));
    }
  }
  if (auto r = g.no_extra(); !r) return tl::unexpected(r.error());
  return std::optional<SshJob>{std::move(s)};
}

Result<ParentMessage> decode_job(Fields& f) {
  Job m;
  COURIER_TRY_FIELD(m.version, f.req<int>("version"));
  COURIER_TRY_FIELD(m.parent_pid, f.req<std::int64_t>("parent_pid"));
  COURIER_TRY_FIELD(m.repo, f.req<std::string>("repo"));
  COURIER_TRY_FIELD(m.remote, f.req<std::string>("remote"));
  std::vector<json> updates;
  COURIER_TRY_FIELD(updates, f.req<std::vector<json>>("updates"));
  COURIER_TRY_FIELD(m.updates, decode_updates(updates));
  std::optional<bool> atomic;
  COURIER_TRY_FIELD(atomic, f.opt<bool>("atomic"));
  m.atomic = atomic.value_or(false);
  std::optional<std::vector<std::string>> push_options;
  COURIER_TRY_FIELD(push_options, f.opt<std::vector<std::string>>("push_options"));
  m.push_options = push_options.value_or(std::vector<std::string>{});
  if (m.push_options.size() > kMaxPushOptions) {
    return fail(Errc::invalid_value, "job: field 'push_options' has too many entries");
  }
  std::optional<bool> redelivery;
  COURIER_TRY_FIELD(redelivery, f.opt<bool>("redelivery"));
  m.redelivery = redelivery.value_or(false);
  COURIER_TRY_FIELD(m.deadline_mono_ns, f.req<std::int64_t>("deadline_mono_ns"));
  COURIER_TRY_FIELD(m.authenticated, f.req<bool>("authenticated"));
  COURIER_TRY_FIELD(m.ca_file, f.opt<std::string>("ca_file"));
  COURIER_TRY_FIELD(m.ca_source, f.opt<std::string>("ca_source"));
  COURIER_TRY_FIELD(m.proxy, f.opt<std::string>("proxy"));
  COURIER_TRY_FIELD(m.allow_http_loopback, f.req<bool>("allow_http_loopback"));
  COURIER_TRY_FIELD(m.scratch_dir, f.req<std::string>("scratch_dir"));
  COURIER_TRY_FIELD(m.pack_git, f.opt<std::string>("pack_git"));
  if (m.proxy && m.proxy->find('@') != std::string::npos) {
    return fail(Errc::invalid_value, "job: field 'proxy' must not carry credentials");
  }
  std::optional<bool> bind_payload;
  COURIER_TRY_FIELD(bind_payload, f.opt<bool>("bind_payload"));
  m.bind_payload = bind_payload.value_or(false);
  if (m.bind_payload && !m.authenticated) {
    return fail(Errc::invalid_value, "job: field 'bind_payload' needs an authenticated job");
  }
  std::optional<bool> challenge_first;
  COURIER_TRY_FIELD(challenge_first, f.opt<bool>("challenge_first"));
  m.challenge_first = challenge_first.value_or(false);
  if (m.challenge_first && !m.authenticated) {
    return fail(Errc::invalid_value, "job: field 'challenge_first' needs an authenticated job");
  }
  std::optional<bool> pack_auto;
  COURIER_TRY_FIELD(pack_auto, f.opt<bool>("pack_auto"));
  m.pack_auto = pack_auto.value_or(false);
  if (m.pack_auto && !m.pack_git) return fail(Errc::invalid_value, "job: field 'pack_auto' needs 'pack_git'");
  std::optional<bool> remote_progress;
  COURIER_TRY_FIELD(remote_progress, f.opt<bool>("remote_progress"));
  m.remote_progress = remote_progress.value_or(false);
  if (m.pack_git && (m.pack_git->empty() || m.pack_git->front() != '/')) {
    return fail(Errc::invalid_value, "job: field 'pack_git' must be an absolute path");
  }
  if (m.parent_pid <= 0) return fail(Errc::invalid_value, "job: field 'parent_pid' must be positive");
  if (m.deadline_mono_ns <= 0) {
    return fail(Errc::invalid_value, "job: field 'deadline_mono_ns' must be positive");
  }
  COURIER_TRY_FIELD(m.lease_bound_mono_ns, f.opt<std::int64_t>("lease_bound_mono_ns"));
  if (m.lease_bound_mono_ns && *m.lease_bound_mono_ns <= 0) {
    return fail(Errc::invalid_value, "job: field 'lease_bound_mono_ns' must be positive");
  }
  for (auto [name, v] : {std::pair{"repo", &m.repo}, {"remote", &m.remote}, {"scratch_dir", &m.scratch_dir}}) {
    if (auto r = nonempty("job", name, *v); !r) return tl::unexpected(r.error());
  }
  COURIER_TRY_FIELD(m.ssh, decode_ssh_job(f));
  return m;
}

Result<ParentMessage> decode_minted(Fields& f) {
  Minted m;
  COURIER_TRY_FIELD(m.leg, f.req<std::string>("leg"));
  COURIER_TRY_FIELD(m.header, f.opt<std::string>("header"));
  COURIER_TRY_FIELD(m.refused, f.opt<std::string>("refused"));
  if (m.header.has_value() == m.refused.has_value()) {
    return fail(Errc::invalid_value, "minted: exactly one of 'header' and 'refused' must be present");
  }
  return m;
}

Result<ParentMessage> decode_authority(Fields& f) {
  Authority m;
  COURIER_TRY_FIELD(m.phase, f.req<std::string>("phase"));
  COURIER_TRY_FIELD(m.ok, f.req<bool>("ok"));
  COURIER_TRY_FIELD(m.reason, f.opt<std::string>("reason"));
  COURIER_TRY_FIELD(m.proxy_authorization, f.opt<std::string>("proxy_authorization"));
  if (m.ok && m.reason) {
    return fail(Errc::invalid_value, "authority: a grant must not carry a refusal 'reason'");
  }
  if (!m.ok && m.proxy_authorization) {
    return fail(Errc::invalid_value, "authority: a refusal must not carry 'proxy_authorization'");
  }
  return m;
}

Result<ParentMessage> decode_lease(Fields& f) {
  Lease m;
  COURIER_TRY_FIELD(m.bound_mono_ns, f.req<std::int64_t>("bound_mono_ns"));
  if (m.bound_mono_ns <= 0) return fail(Errc::invalid_value, "lease: field 'bound_mono_ns' must be positive");
  return m;
}

template <class Out, class Decoder>
Result<Out> finish(Fields& f, Decoder&& d) {
  auto m = d(f);
  if (!m) return tl::unexpected(m.error());
  if (auto extra = f.no_extra(); !extra) return tl::unexpected(extra.error());
  return Out{std::move(*m)};
}

}  // namespace

Result<ChildMessage> decode_child(std::string_view text) {
  auto j = parse_object(text);
  if (!j) return tl::unexpected(j.error());
  const std::string type = (*j)["type"].get<std::string>();
  Fields f(*j, type);
  if (type == "hello") return finish<ChildMessage>(f, decode_hello);
  if (type == "mint") return finish<ChildMessage>(f, decode_mint);
  if (type == "check") return finish<ChildMessage>(f, decode_check);
  if (type == "progress") return finish<ChildMessage>(f, decode_progress);
  if (type == "result") return finish<ChildMessage>(f, decode_result);
  return fail(Errc::unknown_type, "unknown message type '" + type + "' from the child");
}

Result<ParentMessage> decode_parent(std::string_view text) {
  auto j = parse_object(text);
  if (!j) return tl::unexpected(j.error());
  const std::string type = (*j)["type"].get<std::string>();
  Fields f(*j, type);
  if (type == "job") return finish<ParentMessage>(f, decode_job);
  if (type == "minted") return finish<ParentMessage>(f, decode_minted);
  if (type == "authority") return finish<ParentMessage>(f, decode_authority);
  if (type == "lease") return finish<ParentMessage>(f, decode_lease);
  return fail(Errc::unknown_type, "unknown message type '" + type + "' from the parent");
}

Result<std::string> encode(const ChildMessage& msg) {
  json j;
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Hello>) {
          j = {{"type", "hello"}, {"version", m.version}, {"pid", m.pid}, {"argv", m.argv}, {"env_keys", m.env_keys}};
          put_opt(j, "fds", m.fds);
        } else if constexpr (std::is_same_v<T, Mint>) {
          j = {{"type", "mint"}, {"leg", m.leg}, {"method", m.method}, {"url", m.url}};
          put_opt(j, "body_sha256", m.body_sha256);
          put_opt(j, "body_len", m.body_len);
        } else if constexpr (std::is_same_v<T, Check>) {
          j = {{"type", "check"}, {"phase", m.phase}};
          if (!m.old_oids.empty()) j["old_oids"] = m.old_oids;
        } else if constexpr (std::is_same_v<T, Progress>) {
          j = {{"type", "progress"}, {"phase", m.phase}, {"done", m.done}, {"total", m.total}};
          put_opt(j, "message", m.message);
          if (!m.old_oids.empty()) j["old_oids"] = m.old_oids;
          put_opt(j, "pack_engine", m.pack_engine);
        } else {
          json refs = json::array();
          for (const RefResult& r : m.refs) {
            json one = {{"ref", r.ref}, {"status", std::string(enum_word(r.status))}};
            put_opt(one, "reason", r.reason);
            put_opt(one, "old_oid", r.old_oid);
            refs.push_back(std::move(one));
          }
          j = {{"type", "result"}, {"status", std::string(wire::status_word(m.status))}, {"refs", std::move(refs)}};
          put_opt(j, "reason", m.reason);
          put_opt(j, "detail", m.detail);
          put_opt(j, "objects", m.objects);
          put_opt(j, "bytes_sent", m.bytes_sent);
          put_opt(j, "pack_engine", m.pack_engine);
          put_opt(j, "advertise_ms", m.advertise_ms);
          put_opt(j, "pack_ms", m.pack_ms);
          put_opt(j, "upload_ms", m.upload_ms);
          if (!m.remote_messages.empty()) j["remote_messages"] = m.remote_messages;
          put_opt(j, "remote_messages_dropped", m.remote_messages_dropped);
        }
      },
      msg);
  return dump(j);
}

Result<std::string> encode(const ParentMessage& msg) {
  json j;
  bool ambiguous = false;
  bool incomplete = false;  // a job whose compare-and-swap has nothing to compare
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Job>) {
          j = {{"type", "job"},
               {"version", m.version},
               {"parent_pid", m.parent_pid},
               {"repo", m.repo},
               {"remote", m.remote},
               {"updates", json::array()},
               {"deadline_mono_ns", m.deadline_mono_ns},
               {"authenticated", m.authenticated},
               {"allow_http_loopback", m.allow_http_loopback},
               {"scratch_dir", m.scratch_dir}};
          for (const RefUpdate& u : m.updates) {
            json one = {{"ref", u.ref}, {"oid", u.oid}, {"update", std::string(update_mode_word(u.update))}};
            put_opt(one, "expect_old", u.expect_old);
            incomplete = incomplete || (u.update == UpdateMode::expect_old && !u.expect_old);
            j["updates"].push_back(std::move(one));
          }
          if (m.atomic) j["atomic"] = true;
          if (!m.push_options.empty()) j["push_options"] = m.push_options;
          if (m.redelivery) j["redelivery"] = true;
          put_opt(j, "ca_file", m.ca_file);
          put_opt(j, "ca_source", m.ca_source);
          put_opt(j, "proxy", m.proxy);
          put_opt(j, "pack_git", m.pack_git);
          put_opt(j, "lease_bound_mono_ns", m.lease_bound_mono_ns);
          if (m.remote_progress) j["remote_progress"] = true;
          if (m.bind_payload) j["bind_payload"] = true;
          if (m.pack_auto) j["pack_auto"] = true;
          if (m.challenge_first) j["challenge_first"] = true;
          if (m.ssh) {
            j["ssh"] = {{"program", m.ssh->program},
                        {"agent_socket", m.ssh->agent_socket},
                        {"known_hosts", m.ssh->known_hosts},
                        {"identity", m.ssh->identity},
                        {"host_key_alias", m.ssh->host_key_alias}};
          }
        } else if constexpr (std::is_same_v<T, Minted>) {
          ambiguous = m.header.has_value() == m.refused.has_value();
          j = {{"type", "minted"}, {"leg", m.leg}};
          put_opt(j, "header", m.header);
          put_opt(j, "refused", m.refused);
        } else if constexpr (std::is_same_v<T, Lease>) {
          j = {{"type", "lease"}, {"bound_mono_ns", m.bound_mono_ns}};
        } else {
          ambiguous = (m.ok && m.reason.has_value()) || (!m.ok && m.proxy_authorization.has_value());
          j = {{"type", "authority"}, {"phase", m.phase}, {"ok", m.ok}};
          put_opt(j, "reason", m.reason);
          put_opt(j, "proxy_authorization", m.proxy_authorization);
        }
      },
      msg);
  if (ambiguous) return fail(Errc::invalid_value, "refusing to encode an ambiguous reply");
  if (incomplete) return fail(Errc::invalid_value, "refusing to encode a job with update expect_old and no expect_old");
  return dump(j);
}

const char* type_name(const ChildMessage& m) {
  static const char* const names[] = {"hello", "mint", "check", "progress", "result"};
  return names[m.index()];
}

const char* type_name(const ParentMessage& m) {
  static const char* const names[] = {"job", "minted", "authority", "lease"};
  return names[m.index()];
}

MintRequest to_mint_request(const Mint& m) { return MintRequest{m.leg, m.method, m.url, m.body_sha256, m.body_len}; }

}  // namespace courier::protocol
