// messages.hpp — the typed messages carried in frames, and their JSON codec.
//
// Every message is one JSON object with a "type" field. Decoding is strict:
// a missing field, a field of the wrong JSON type, an unknown "type" or an
// extra field is an error that names the field. nlohmann/json exceptions
// stop here: callers only ever see Result values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "courier/host_api.hpp"
#include "courier/outcome.hpp"
#include "courier/ref_update.hpp"
#include "courier/update_mode.hpp"
#include "courier/result.hpp"
#include "wire/legs.hpp"
#include "wire/status.hpp"

namespace courier::protocol {

inline constexpr int kProtocolVersion = 1;
inline constexpr int kMaxMints = wire::kMaxMints;

inline constexpr std::string_view kLegAdvertisement = wire::leg_spec(wire::Leg::advertisement).name;
inline constexpr std::string_view kLegReceivePack = wire::leg_spec(wire::Leg::receive_pack).name;

// ---- child -> parent ----------------------------------------------------
struct Hello {
  int version = kProtocolVersion;
  std::int64_t pid = 0;
  std::vector<std::string> argv;
  std::vector<std::string> env_keys;
  // The descriptors open in the child when it said hello (so a supervisor can
  // prove none of its own leaked). Optional: stand-ins may omit it.
  std::optional<std::vector<int>> fds;
  bool operator==(const Hello&) const = default;
};

struct Mint {
  std::string leg;     // kLegAdvertisement | kLegReceivePack
  std::string method;  // GET | POST
  std::string url;
  std::optional<std::string> body_sha256;
  std::optional<std::uint64_t> body_len;
  bool operator==(const Mint&) const = default;
};

// The host's view of a mint frame (the public type a mint callback takes).
MintRequest to_mint_request(const Mint& m);

// The check before the receive-pack POST is also the write-ahead point
// (J1): the parent asks authority, then makes `post_started` durable, and
// only then answers ok. The child begins the POST only after that answer,
// whatever the auth mode. It names the ref's advertised old id, which the
// journal keeps for a compare-and-swap re-delivery (J4).
inline constexpr std::string_view kCheckPost = "upload";

// Every ref of the job with its id as the remote advertised it (40 zeros:
// absent), by ref name.
using OldOids = std::map<std::string, std::string>;

// The POST check (kCheckPost) names what the parent must know even if no
// result ever comes (a kill, a crash, a deadline during the POST): its
// old_oids name EXACTLY the refs whose commands go in this POST, each with
// the old id its command carries (the journal keeps them at post_started
// for a compare-and-swap, J4). A ref left out (up to date, refused here, not
// sent) had no command: its remote_effect stays none whatever happens to the
// POST (J2 per ref); its advertised id came with the advertise frame. A
// check naming no ref at all (the encoding of one ref, before sets) sends
// every ref of the job. The parent takes no result of a remote answer that
// says ok or ng for a ref the check left out, or anything but ok or ng for a
// ref it named (T4).
struct Check {
  std::string phase;
  OldOids old_oids;  // kCheckPost: the refs sent and their old ids (encoded only when there are any)
  bool operator==(const Check&) const = default;
};

// Phases the child reports (docs/protocol.md): "advertise", the pack's
// "enumerate" (objects found, no total), "count" and "compress" (done of
// total objects), "upload" (bytes of the POST body), and the remote's
// side-band text: "remote" (one line ended by a newline: a message) and
// "remote_progress" (one line ended by a carriage return: a meter the next
// line replaces), both printable, in `message`.
inline constexpr std::size_t kMaxRemoteMessages = 100;
inline constexpr std::size_t kMaxRemoteLine = 512;

// Two frames also carry a fact the parent keeps for the outcome, whatever
// ends the delivery later (a kill sends no result): the advertisement's
// last frame ("advertise", done == total) names every ref's old id as the
// remote advertised it (J4), and the pack's first frame ("enumerate", 0 of
// 0) names the pack engine.
struct Progress {
  std::string phase;
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  std::optional<std::string> message;      // e.g. the remote's own progress text
  OldOids old_oids;                        // "advertise" done: every ref's advertised id (40 zeros: absent)
  std::optional<std::string> pack_engine;  // the pack's first frame: "libgit2" or "git"
  bool operator==(const Progress&) const = default;
};

// status: one of wire::DeliveryStatus, as its word on the wire.
// One ref of the job, as the child ended it (RefStatus, in its word).
struct RefResult {
  std::string ref;
  RefStatus status = RefStatus::not_attempted;
  std::optional<std::string> reason;   // rejected, ng
  std::optional<std::string> old_oid;  // as advertised (absent: no advertisement was read)
  bool operator==(const RefResult&) const = default;
};

// The delivery's status, and every ref of the job in the job's order: the
// parent takes no result that names another ref, leaves one out, or says
// delivered while a ref is not ok or up to date (P1, T4).
struct ResultMsg {
  wire::DeliveryStatus status = wire::DeliveryStatus::failed;
  std::vector<RefResult> refs;
  std::optional<std::string> reason;
  std::optional<std::string> detail;
  std::optional<std::uint64_t> objects;
  std::optional<std::uint64_t> bytes_sent;
  // The engine that built (or was building) the pack: "libgit2" or "git".
  // Absent when no pack was begun.
  std::optional<std::string> pack_engine;
  // Phase durations measured by the child, in milliseconds.
  std::optional<std::uint64_t> advertise_ms;
  std::optional<std::uint64_t> pack_ms;
  std::optional<std::uint64_t> upload_ms;
  // The remote's own words (side-band 2 lines ended by a newline: hook
  // output, receive-pack's messages), printable, oldest first: at most
  // kMaxRemoteMessages lines of at most kMaxRemoteLine bytes each (before
  // escaping); the earlier lines beyond the count are dropped and counted.
  // Encoded only when there are any.
  std::vector<std::string> remote_messages;
  std::optional<std::uint64_t> remote_messages_dropped;
  bool operator==(const ResultMsg&) const = default;
};

using ChildMessage = std::variant<Hello, Mint, Check, Progress, ResultMsg>;

// ---- parent -> child ----------------------------------------------------
// What the child needs to reach an SSH remote (A5, T5); the remote itself
// (user, host, port, path) is the job's canonical `remote`. Every path is
// absolute and was made by the parent for this delivery, except `program`.
struct SshJob {
  std::string program;         // OpenSSH's ssh, run by this absolute path
  std::string agent_socket;    // the parent's agent for this delivery (IdentityAgent)
  std::string known_hosts;     // the entries the parent accepts for this host (UserKnownHostsFile)
  std::string identity;        // the key's public half (IdentityFile, with IdentitiesOnly)
  std::string host_key_alias;  // the name the host key is looked up under: host, or [host]:port
  bool operator==(const SshJob&) const = default;
};

struct Job {
  int version = kProtocolVersion;
  std::int64_t parent_pid = 0;
  std::string repo;
  std::string remote;
  // The refs to move, in the request's order (at least one, no ref twice):
  // each {ref, oid (the zero id: delete), update (its word: "fast_forward",
  // "force" or "expect_old"), expect_old}. expect_old, when present, is
  // compared in every mode and is required by UpdateMode::expect_old.
  std::vector<RefUpdate> updates;
  // Move them together (receive-pack's `atomic`); the parent decided it
  // (Atomicity). Absent in a frame: false.
  bool atomic = false;
  // Push options for the server (`push-options`). Absent: none.
  std::vector<std::string> push_options;
  // A compare-and-swap re-delivery after `possible` (J4): every update
  // carries the journalled old id as expect_old, and an atomic one whose
  // refs are partly at their new ids and partly at their old ones is stale
  // (an atomic attempt cannot have applied half). Absent: false.
  bool redelivery = false;
  std::int64_t deadline_mono_ns = 0;
  bool authenticated = false;
  // The POST's token binds its body (its SHA-256 goes in the mint): the
  // child must spool and hash the pack before the POST. False: the pack may
  // stream into the POST as it is built. Absent in a frame: false.
  bool bind_payload = false;
  std::optional<std::string> ca_file;
  // Where ca_file came from, for messages ("GIT_SSL_CAINFO", ...). Absent:
  // not said.
  std::optional<std::string> ca_source;
  // With authenticated: the advertisement GET goes first without
  // credentials and a mint is asked for only after its 401 (T2; the git
  // credential minter). Absent in a frame: false.
  bool challenge_first = false;
  // An http:// proxy to tunnel through with CONNECT (T1): host and port
  // only, never credentials (those come per leg, in Authority).
  std::optional<std::string> proxy;
  bool allow_http_loopback = false;
  std::string scratch_dir;
  // The pack engine: absent, libgit2's packbuilder in the child; present,
  // the absolute path of the git program whose pack-objects the child runs
  // inside its own kill domain (reusing the repository's stored deltas).
  std::optional<std::string> pack_git;
  // With pack_git: the host asked for the automatic engine, so the child
  // builds a small push's pack with libgit2 instead (starting git would
  // cost more than the whole pack), and so it does when pack_git's
  // `--version` is older than 2.32.0 (asked only when git would pack: the
  // parent starts no git). Absent in a frame: false.
  bool pack_auto = false;
  // Ask the remote for its progress (the `quiet` capability is not sent):
  // the parent shows it, so it decides (the CLI: when its stderr is a
  // terminal). Absent in a frame: false.
  bool remote_progress = false;
  // The lane's lease bound (L2), CLOCK_MONOTONIC like the deadline: the
  // child's own timer kills its process group at this instant, whatever
  // the parent does; each later bound comes in a Lease frame. Absent: no
  // lease (one host, or no shared state).
  std::optional<std::int64_t> lease_bound_mono_ns;
  // An ssh:// remote: how to reach it. Absent: an http(s) remote.
  std::optional<SshJob> ssh;
  bool operator==(const Job&) const = default;
};

// A new lease bound (L2), sent by the parent at any time after a job that
// had one, each time the lease is renewed; always later than the last. The
// child re-arms its timer to it at once, whatever it is doing.
struct Lease {
  std::int64_t bound_mono_ns = 0;
  bool operator==(const Lease&) const = default;
};

struct Minted {
  std::string leg;
  std::optional<std::string> header;
  std::optional<std::string> refused;
  bool operator==(const Minted&) const = default;
};

struct Authority {
  std::string phase;
  bool ok = false;
  std::optional<std::string> reason;
  // With a grant, for a job with a proxy that has credentials: the
  // "Proxy-Authorization: Basic ..." line for the leg about to start. Kept
  // in the parent like every secret and handed over per leg; never with a
  // refusal.
  std::optional<std::string> proxy_authorization;
  bool operator==(const Authority&) const = default;
};

using ParentMessage = std::variant<Job, Minted, Authority, Lease>;

// Encoders produce the JSON body of one frame. Errors: invalid_value (a
// string that is not UTF-8, or a message that violates an exactly-one-of
// rule).
Result<std::string> encode(const ChildMessage& m);
Result<std::string> encode(const ParentMessage& m);

// Decoders. Errors: malformed_json, invalid_utf8, missing_field, wrong_type,
// unknown_type, unknown_field, invalid_value.
Result<ChildMessage> decode_child(std::string_view json);
Result<ParentMessage> decode_parent(std::string_view json);

// "hello", "mint", ... — for logs and errors.
const char* type_name(const ChildMessage& m);
const char* type_name(const ParentMessage& m);

}  // namespace courier::protocol
