// push.cpp — the child's delivery: legs, pack, report.
#include "child/push.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "child/git_version.hpp"
#include "child/pack.hpp"
#include "child/progress_out.hpp"
#include "child/push_leg.hpp"
#include "child/ssh_argv.hpp"
#include "child/ref_plan.hpp"
#include "repo/repository.hpp"
#include "sys/clock.hpp"
#include "sys/file.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"
#include "transport/advertisement.hpp"
#include "transport/http_leg.hpp"
#include "transport/oid.hpp"
#include "transport/report.hpp"
#include "transport/sideband_text.hpp"
#include "transport/request.hpp"
#include "wire/digest.hpp"
#include "wire/status.hpp"
#include "wire/text.hpp"

namespace courier::child {

namespace {

std::uint64_t ms_since(sys::MonoNs t) { return static_cast<std::uint64_t>((sys::mono_now_ns() - t) / sys::kNsPerMs); }

// A stage's answer: the value to go on with, or the result that ends the
// delivery (a failure, or an answer that needs no POST).
template <class T>
using Step = tl::expected<T, protocol::ResultMsg>;

// One delivery, in stages (each below with its contract):
//   preflight      the gated objects and the remote's scheme, before any I/O
//   advertise      leg 1: the advertisement (a GET, or ssh's first words), parsed
//   negotiate      what the job needs of the remote (atomic, push-options)
//   settle         which refs the POST updates (ref_plan.hpp); an
//                  advertisement that ends the delivery without a POST
//   spool_pack     the pack, built into the scratch directory, where the
//                  POST's token binds the body's hash (bind_payload) or
//                  the engine cannot stream (libgit2)
//   start_stream   otherwise: git pack-objects started, its first bytes
//                  read, so the POST begins only once the pack exists
//   upload         leg 2: the receive-pack POST (or the same bytes written to
//                  ssh), sent at most once, its report read
//   conclude       the report judged for every ref sent (T4)
class Push {
 public:
  Push(const protocol::Job& job, Channel& ch) : job_(job), ch_(ch) {
    // Every result names the job's refs, whatever its status: the parent
    // takes no result for anything else (P1).
    for (const RefUpdate& u : job.updates) {
      result_.refs.push_back(protocol::RefResult{u.ref, RefStatus::not_attempted, {}, {}});
    }
    result_.status = wire::DeliveryStatus::failed;
  }

  protocol::ResultMsg run() {
    if (auto ok = preflight(); !ok) return ok.error();
    auto adv = advertise();
    if (!adv) return adv.error();
    if (auto ok = negotiate(*adv); !ok) return ok.error();
    if (auto ok = settle(*adv); !ok) return ok.error();
    if (!tips_.empty()) {
      if (auto ok = find_edge(*adv); !ok) return ok.error();
      if (auto ok = choose_engine(*adv); !ok) return ok.error();
    }
    auto body = streams() ? start_stream(*adv) : spool_pack(*adv);
    if (!body) return body.error();
    auto report = upload(*body);
    if (!report) return report.error();
    return conclude(*report);
  }

 private:
  // Local checks before any request: every gated object exists in the
  // repository (C3), and the remote's scheme is one T1 allows. Ends with
  // failed / transport_failed.
  Step<void> preflight() {
    for (const RefUpdate& u : job_.updates) {
      if (u.deletes()) continue;
      auto repo = opened();
      if (!repo) return stop(wire::DeliveryStatus::failed, repo.error().message);
      if (auto ok = repo::gated_object(*repo, u.oid); !ok) {
        return stop(wire::DeliveryStatus::failed, ok.error().message);
      }
    }
    if (auto ok = check_scheme(); !ok) return stop(wire::DeliveryStatus::transport_failed, ok.error().message);
    return {};
  }

  // T1 for http(s) remotes; an ssh:// remote only with the job's ssh part
  // (the parent's agent, known hosts and key for it: A5), and none without.
  Result<void> check_scheme() const {
    const bool ssh_remote = job_.remote.rfind("ssh://", 0) == 0;
    if (job_.ssh && !ssh_remote) return fail(Errc::scheme_refused, "the job's ssh part names no ssh:// remote");
    if (job_.ssh) {
      if (job_.ssh->program.empty() || job_.ssh->program.front() != '/') {
        return fail(Errc::scheme_refused, "ssh must be run by an absolute path, not '" + job_.ssh->program + "'");
      }
      auto target = parse_ssh_target(job_.remote);
      if (!target) return tl::unexpected(target.error());
      return {};
    }
    if (ssh_remote)
      return fail(Errc::scheme_refused, "an ssh:// remote comes with the parent's ssh setup, and this job has none");
    return transport::check_remote_scheme(job_.remote, job_.allow_http_loopback);
  }

  // Leg 1 (the job's leg, push_leg.hpp): authority asked, the
  // advertisement fetched and parsed. Records advertise_ms. Ends with
  // auth_failed, failed (authority) or transport_failed.
  Step<transport::Advertisement> advertise() {
    const sys::MonoNs t_adv = sys::mono_now_ns();
    out_.progress("advertise", 0, 1);
    auto body = leg_->advertise();
    if (!body) return stop(body.error().status, body.error().reason);
    auto adv = transport::parse_advertisement(*body, leg_->form());
    if (!adv) return stop(wire::DeliveryStatus::transport_failed, adv.error().message);
    result_.advertise_ms = ms_since(t_adv);
    // The old id goes to the parent now: whatever ends the delivery from
    // here (a kill sends no result), its outcome names it (J4).
    for (auto& r : result_.refs) {
      r.old_oid = std::string(adv->oid_of(r.ref));
      old_oids_[r.ref] = *r.old_oid;
    }
    protocol::Progress done{"advertise", 1, 1, std::nullopt, old_oids_, std::nullopt};
    out_.send(done);
    return std::move(*adv);
  }

  // What the job asks of the remote beyond pushing, checked before
  // anything is sent: atomic, push-options. Ends with transport_failed,
  // every ref not attempted.
  Step<void> negotiate(const transport::Advertisement& adv) {
    if (auto ok = transport::check_requested_capabilities(adv.capabilities, request_options()); !ok) {
      return stop(wire::DeliveryStatus::transport_failed, ok.error().message);
    }
    return {};
  }

  transport::RequestOptions request_options() const {
    return transport::RequestOptions{job_.remote_progress, job_.atomic, job_.push_options};
  }

  // Every ref's fate before any POST (ref_plan.hpp): up to date, refused
  // here in git's words ("stale info", "non-fast-forward", ...), or sent.
  // Ends the delivery when no ref is sent: up_to_date when every ref is,
  // rejected otherwise. A history that cannot be read ends it failed. Goes
  // on with the refs to send and the pack's tips (their new ids, deletions
  // left out).
  Step<void> settle(const transport::Advertisement& adv) {
    auto repo = opened();
    if (!repo) return stop(wire::DeliveryStatus::failed, repo.error().message);
    auto plan = plan_refs(job_, adv, *repo);
    if (!plan) return stop(wire::DeliveryStatus::failed, plan.error().message);
    result_.refs = std::move(plan->refs);
    send_ = std::move(plan->send);
    if (send_.empty()) {
      const Summary sum = summarise(result_.refs);
      result_.status = sum.status;
      if (sum.status == wire::DeliveryStatus::up_to_date) {
        result_.objects = 0;
        result_.bytes_sent = 0;
      } else {
        result_.reason = sum.reason;
      }
      return tl::unexpected(result_);
    }
    for (std::size_t i : send_) {
      if (!job_.updates[i].deletes()) tips_.push_back(job_.updates[i].oid);
    }
    return {};
  }

  // The commands of the refs sent.
  std::vector<transport::RefCommand> commands() const {
    std::vector<transport::RefCommand> out;
    for (std::size_t i : send_) out.push_back({job_.updates[i].ref, job_.updates[i].oid});
    return out;
  }

  // The request (T4: exactly the refs sent, from the advertised ids) and
  // the pack, spooled in the scratch directory (never the repository, C3),
  // with the body's digest for the POST's token; no pack when every
  // command deletes. Records objects and pack_ms. Ends with
  // transport_failed (the request) or failed: building the pack is local
  // work, never blamed on the transport.
  Step<PostBody> spool_pack(const transport::Advertisement& adv) {
    auto request = transport::build_push_request(adv, commands(), request_options());
    if (!request) return stop(wire::DeliveryStatus::transport_failed, request.error().message);
    const std::string spool = job_.scratch_dir + "/pack-" + std::to_string(sys::self_pid()) + ".pack";
    auto fd = sys::create_new_file(spool, 0600);
    if (!fd)
      return stop(wire::DeliveryStatus::failed,
                  "cannot create the pack spool in " + job_.scratch_dir + ": " + fd.error().message);
    // The body's SHA-256 binds the POST's token to exactly these bytes (A2).
    wire::Sha256 digest;
    digest.update(request->body_prefix);
    PackSpec spec = pack_spec(adv);
    std::uint64_t spooled = 0;
    spec.sink = [&](const void* data, std::size_t n) -> Result<void> {
      digest.update(std::string_view(static_cast<const char*>(data), n));
      auto written = sys::write_all(fd->get(), static_cast<const char*>(data), n);
      if (!written && written.error().code == Errc::disk_full) {
        // The pack's size is not known before it is built: what it needed
        // is at least what was written plus the chunk that did not fit.
        return fail(Errc::disk_full, "the pack spool in " + job_.scratch_dir + " needs at least " +
                                         std::to_string(spooled + n) + " bytes (" + std::to_string(spooled) +
                                         " written before the disk filled): " + written.error().message);
      }
      if (written) spooled += n;
      return written;
    };
    PackResult pack;
    if (request->pack) {
      pack_begins();
      auto built = pack_git_ ? build_pack_with_git(spec, *pack_git_, job_.scratch_dir) : build_pack(spec);
      out_.flush();
      if (!built) return stop(wire::DeliveryStatus::failed, built.error().message);
      pack = *built;
      result_.pack_ms = ms_since(t_pack_);
    }
    result_.objects = pack.objects;
    const std::uint64_t body_len = request->body_prefix.size() + pack.bytes;
    return PostBody{std::move(*request), std::move(*fd), digest.hex_digest(), body_len, {}};
  }

  // Whether the pack streams into the POST: only when the POST's token does
  // not bind the body's hash (a hash needs the whole body before the POST,
  // docs/auth.md), and only with the git engine (libgit2's packbuilder
  // writes nothing until its whole delta search is done, so streaming it
  // would overlap little; docs/performance.md).
  bool streams() const { return pack_git_.has_value() && !job_.bind_payload && !tips_.empty(); }

  // The push's edge, found once for the engine's choice and the pack (a
  // remote with many refs advertises far more than the pack needs;
  // child/send_edge.hpp). The pack phase's clock starts here. Ends with
  // failed (the repository could not be walked).
  Step<void> find_edge(const transport::Advertisement& adv) {
    t_pack_ = sys::mono_now_ns();
    // Views of the advertisement's ids: a remote's 900,000 refs are not
    // copied for this.
    std::vector<std::string_view> advertised;
    advertised.reserve(adv.refs.size() + adv.haves.size());
    for (const auto& [ref, id] : adv.refs) {
      if (!transport::is_zero_oid(id)) advertised.emplace_back(id);
    }
    advertised.insert(advertised.end(), adv.haves.begin(), adv.haves.end());
    auto repo = opened();
    if (!repo) return stop(wire::DeliveryStatus::failed, repo.error().message);
    auto edge = find_send_edge(*repo, tips_, advertised);
    if (!edge) return stop(wire::DeliveryStatus::failed, edge.error().message);
    edge_ = std::make_shared<const SendEdge>(std::move(*edge));
    return {};
  }

  // The pack engine: the job's. An automatic choice of git (pack_auto)
  // becomes libgit2 for a small push: the remote has part of this history
  // and lacks at most kSmallPushCommits commits of it, where starting git
  // costs more than libgit2's whole pack (docs/performance.md); and when
  // the git is unfit (older than kMinGitVersion, or no git at all): its
  // version is asked only here, when it would pack, so a small push starts
  // no git. Ends with failed (the repository could not be walked).
  Step<void> choose_engine(const transport::Advertisement& adv) {
    pack_git_ = job_.pack_git;
    if (!pack_git_ || !job_.pack_auto) return {};
    auto small = is_small_push(pack_spec(adv), kSmallPushCommits);
    if (!small) return stop(wire::DeliveryStatus::failed, small.error().message);
    if (*small || !usable_git(*pack_git_)) pack_git_.reset();
    return {};
  }

  // The engine building this delivery's pack, as the result names it.
  std::string engine_word() const { return pack_git_ ? "git" : "libgit2"; }

  // The pack's first frame names its engine, so that an outcome without a
  // result (a kill mid-pack or mid-upload) still says which one ran.
  void pack_begins() {
    result_.pack_engine = engine_word();
    out_.send(protocol::Progress{"enumerate", 0, 0, std::nullopt, {}, result_.pack_engine});
  }

  // The request (T4), and git pack-objects started with its first bytes
  // read: the POST begins only once the pack exists (a pack that cannot be
  // built fails here, before post_started). The body's source hands out
  // those bytes, then the rest as git writes them; the pack's end records
  // objects and pack_ms. Ends with transport_failed (the request) or failed
  // (the pack engine).
  Step<PostBody> start_stream(const transport::Advertisement& adv) {
    auto request = transport::build_push_request(adv, commands(), request_options());
    if (!request) return stop(wire::DeliveryStatus::transport_failed, request.error().message);
    pack_begins();
    stream_spec_ = pack_spec(adv);
    auto stream = GitPackStream::start(stream_spec_, *pack_git_, job_.scratch_dir);
    if (!stream) return stop(wire::DeliveryStatus::failed, stream.error().message);
    stream_ = std::move(*stream);
    first_.resize(kFirstRead);
    auto first = stream_->read(first_.data(), first_.size());
    out_.flush();
    if (!first) return stop(wire::DeliveryStatus::failed, first.error().message);
    first_.resize(*first);
    if (*first == 0) pack_ended();
    PostBody body{std::move(*request), sys::ScopedFd(), std::string(), 0, {}};
    body.source = [this](char* buf, std::size_t n) -> Result<std::size_t> {
      if (first_given_ < first_.size()) {
        const std::size_t k = std::min(n, first_.size() - first_given_);
        std::memcpy(buf, first_.data() + first_given_, k);
        first_given_ += k;
        return k;
      }
      auto r = stream_->read(buf, n);
      if (r && *r == 0) pack_ended();
      return r;
    };
    return body;
  }

  // The streamed pack's end: git exited well and the header was valid.
  void pack_ended() {
    if (result_.pack_ms) return;
    result_.objects = stream_->result().objects;
    result_.pack_ms = ms_since(t_pack_);
  }

  // What the pack engine is asked for: the gated objects, minus everything
  // the remote advertised (its refs and its haves), by the deadline. The
  // sink is the caller's.
  // Once the edge is found, the engines need only it, not the remote's
  // every id again.
  PackSpec pack_spec(const transport::Advertisement& adv) {
    PackSpec spec;
    spec.repo = job_.repo;
    spec.opened = repo_.get();
    spec.oids = tips_;
    spec.edge = edge_;
    if (!edge_) {
      spec.hide.reserve(adv.refs.size() + adv.haves.size());
      for (const auto& [ref, id] : adv.refs) {
        if (!transport::is_zero_oid(id)) spec.hide.push_back(id);
      }
      spec.hide.insert(spec.hide.end(), adv.haves.begin(), adv.haves.end());
    }
    spec.deadline = job_.deadline_mono_ns;
    spec.thin = !adv.capabilities.has("no-thin");
    spec.ofs_delta = adv.capabilities.has("ofs-delta");
    spec.progress = [this](std::string_view phase, std::uint64_t done, std::uint64_t total) {
      out_.progress(std::string(phase), done, total, true);
    };
    return spec;
  }

  // Leg 2, at most once (T2, T5; the job's leg, push_leg.hpp): the POST
  // gate, the body sent and the report read. Records upload_ms and
  // bytes_sent as the body leaves, so a leg that fails afterwards still says
  // how much was sent. Ends with auth_failed, failed (authority) or
  // transport_failed.
  Step<transport::Report> upload(const PostBody& body) {
    const sys::MonoNs t_up = sys::mono_now_ns();
    transport::ReportReader reader(body.request.side_band, body.request.report_v2);
    result_.bytes_sent = 0;
    // A streamed body's length is known only once it has all left: its
    // meter ends with one frame whose total is what was sent, given when
    // the remote's answer begins (it answers only after the whole body),
    // before the remote's lines, and no upload frame follows it.
    bool upload_closed = false;
    auto close_upload = [&]() {
      if (!body.source || upload_closed) return;
      upload_closed = true;
      out_.progress("upload", result_.bytes_sent.value_or(0), result_.bytes_sent.value_or(0));
    };
    transport::SidebandText remote_text(protocol::kMaxRemoteLine);
    UploadIo io{body, [this]() { return post_gate(); },
                [&](std::uint64_t sent, std::uint64_t total) {
                  result_.bytes_sent = sent;
                  if (upload_closed) return;
                  // A streamed body's total is 0 (unknown until its end): throttled too.
                  out_.progress("upload", sent, total, total == 0 || sent < total);
                },
                [&](std::string_view chunk) -> Result<void> {
                  close_upload();
                  auto said = reader.feed(chunk);
                  if (!said) return tl::unexpected(said.error());
                  for (const auto& text : *said) relay_remote_lines(remote_text.feed(text), out_, result_);
                  return {};
                }};
    auto up = leg_->upload(io);
    if (up) {
      result_.bytes_sent = *up;
      close_upload();
    }
    out_.flush();
    relay_remote_lines(remote_text.finish(), out_, result_);
    result_.upload_ms = ms_since(t_up);
    if (!up) return stop(up.error().status, up.error().reason);
    auto report = reader.finish();
    if (!report) return stop(wire::DeliveryStatus::transport_failed, report.error().message);
    return std::move(*report);
  }

  // The point of no return (J1): the parent makes post_started durable
  // before it answers, and nothing of the update leaves before its ok. The
  // check names exactly the refs whose commands are sent, with their old
  // ids (J4).
  LegStep<std::optional<std::string>> post_gate() {
    protocol::OldOids sent_old;
    for (std::size_t i : send_) sent_old[result_.refs[i].ref] = result_.refs[i].old_oid.value_or("");
    auto granted = ch_.check(std::string(protocol::kCheckPost), sent_old);
    if (!granted) return leg_stop(wire::DeliveryStatus::failed, granted.error().message);
    return *granted;
  }

  // T4 for every ref sent: each ok or ng as the report says, and the
  // delivery delivered only when each ref is ok or up to date; rejected
  // with the remote's reasons (and the hook's words) when any is ng; a
  // report that leaves a sent ref out, or names another, is
  // transport_failed.
  protocol::ResultMsg conclude(const transport::Report& report) {
    std::vector<std::string> sent;
    for (std::size_t i : send_) sent.push_back(result_.refs[i].ref);
    auto verdicts = transport::judge_report(report, sent);
    if (!verdicts) return failed(wire::DeliveryStatus::transport_failed, verdicts.error().message);
    for (std::size_t k = 0; k < send_.size(); ++k) {
      protocol::RefResult& r = result_.refs[send_[k]];
      r.status = (*verdicts)[k].ok ? RefStatus::ok : RefStatus::ng;
      if (!(*verdicts)[k].ok) r.reason = (*verdicts)[k].reason;
    }
    const Summary sum = summarise(result_.refs);
    result_.status = sum.status;
    if (sum.status == wire::DeliveryStatus::rejected) result_.reason = sum.reason + hook_words(result_.remote_messages);
    return result_;
  }

  protocol::ResultMsg failed(wire::DeliveryStatus status, const std::string& reason) {
    result_.status = status;
    result_.reason = reason;
    return result_;
  }

  // The job's repository, opened once for the whole delivery (its
  // configuration, object database and packs read once, not at each
  // step). Errors: as open_repo.
  Result<git_repository*> opened() {
    if (!repo_) {
      auto repo = repo::open_repo(job_.repo);
      if (!repo) return tl::unexpected(repo.error());
      repo_ = std::move(*repo);
    }
    return repo_.get();
  }

  // failed() as a stage's stop.
  tl::unexpected<protocol::ResultMsg> stop(wire::DeliveryStatus status, const std::string& reason) {
    return tl::unexpected(failed(status, reason));
  }

  const protocol::Job& job_;
  repo::Repo repo_;  // opened() once; outlives every pack spec that names it
  protocol::OldOids old_oids_;
  // The refs whose commands go in the POST (indexes into the job's
  // updates and the result's refs), and the pack's tips: their new ids,
  // deletions left out.
  std::vector<std::size_t> send_;
  std::vector<std::string> tips_;
  Channel& ch_;
  ProgressOut out_{ch_};
  protocol::ResultMsg result_;
  // What carries the legs: one ssh connection for an ssh:// remote, else
  // two HTTP requests.
  std::unique_ptr<PushLeg> leg_ = job_.ssh ? make_ssh_leg(job_, ch_) : make_http_leg(job_, ch_);
  // A streamed pack: its engine, the spec it reads (it must outlive the
  // stream), and the first bytes read before the POST began.
  static constexpr std::size_t kFirstRead = 64 * 1024;
  PackSpec stream_spec_;
  // The git program whose pack-objects builds the pack; none: libgit2.
  std::optional<std::string> pack_git_;
  static constexpr std::size_t kSmallPushCommits = 16;
  std::unique_ptr<GitPackStream> stream_;
  std::string first_;
  std::size_t first_given_ = 0;
  sys::MonoNs t_pack_ = 0;
  std::shared_ptr<const SendEdge> edge_;
};

}  // namespace

protocol::ResultMsg run_push(const protocol::Job& job, Channel& channel) { return Push(job, channel).run(); }

}  // namespace courier::child
