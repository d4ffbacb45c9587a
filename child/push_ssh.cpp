// push_ssh.cpp — a delivery's legs over one ssh connection (T5,
// push_leg.hpp): OpenSSH's ssh runs `git-receive-pack '<path>'`; its
// stdout carries the advertisement (pkt-lines without smart HTTP's service
// line), then, after the POST gate, the update commands and the pack are
// written once to its stdin and the report read from its stdout. ssh and
// the pack engine run in the child's process group: the parent's kill at
// the deadline ends them with it, and every read and write here is bounded
// by the deadline too.
#include <algorithm>
#include <vector>

#include "child/push_leg.hpp"
#include "child/ssh_argv.hpp"
#include "child/ssh_stderr.hpp"
#include "sys/file.hpp"
#include "transport/pktline.hpp"
#include "transport/ssh_connection.hpp"

namespace courier::child {

namespace {

constexpr std::size_t kChunk = 64 * 1024;
// The advertisement may not exceed this many bytes (as over HTTP).
constexpr std::size_t kMaxAdvertisement = 64ull * 1024 * 1024;

class SshLeg final : public PushLeg {
 public:
  SshLeg(const protocol::Job& job, Channel& ch) : job_(job), ch_(ch) {}

  transport::AdvertisementForm form() const override { return transport::AdvertisementForm::ssh; }

  // Authority asked, ssh started, and its stdout read up to the
  // advertisement's flush. An ssh that ends first (an unknown or changed
  // host key, a refused key, no such repository) is judged by its stderr.
  LegStep<std::string> advertise() override {
    auto granted = ch_.check("advertisement");
    if (!granted) return leg_stop(wire::DeliveryStatus::failed, granted.error().message);
    auto target = parse_ssh_target(job_.remote);
    if (!target) return leg_stop(wire::DeliveryStatus::transport_failed, target.error().message);
    transport::SshStart start{ssh_argv(*job_.ssh, *target, job_.deadline_mono_ns), ssh_env(), job_.deadline_mono_ns};
    auto conn = transport::SshConnection::start(start);
    if (!conn) return leg_stop(wire::DeliveryStatus::transport_failed, conn.error().message);
    conn_ = std::move(*conn);
    std::string body;
    transport::PktDecoder scan;
    std::vector<char> buf(kChunk);
    for (;;) {
      auto got = conn_->read(buf.data(), buf.size());
      if (!got) return ended(got.error(), "reading the ref advertisement");
      if (*got == 0) return ended(std::nullopt, "reading the ref advertisement");
      body.append(buf.data(), *got);
      scan.feed(std::string_view(buf.data(), *got));
      auto done = advertisement_ended(scan);
      if (!done) return leg_stop(wire::DeliveryStatus::transport_failed, "ref advertisement: " + done.error().message);
      if (*done) return body;
      if (body.size() > kMaxAdvertisement) {
        return leg_stop(wire::DeliveryStatus::transport_failed, "the ref advertisement is larger than 64 MiB");
      }
    }
  }

  // The POST gate, then the commands and the pack written once, ssh's
  // input closed, and the answer read to its end.
  LegStep<std::uint64_t> upload(UploadIo& io) override {
    auto granted = io.post_gate();
    if (!granted) return tl::unexpected(granted.error());
    auto sent = send_body(io);
    if (!sent) return tl::unexpected(sent.error());
    conn_->close_stdin();
    std::vector<char> buf(kChunk);
    for (;;) {
      auto got = conn_->read(buf.data(), buf.size());
      if (!got) return ended(got.error(), "reading the report");
      if (*got == 0) break;
      if (auto fed = io.on_response(std::string_view(buf.data(), *got)); !fed) {
        return leg_stop(wire::DeliveryStatus::transport_failed, fed.error().message);
      }
    }
    auto status = conn_->finish();
    if (!status) return leg_stop(wire::DeliveryStatus::transport_failed, status.error().message);
    // 255 is ssh's own failure (the connection); the remote command's exit
    // is left to the report, which T4 judges.
    if (status->code == 255 || status->signal != 0) return ended(std::nullopt, "reading the report");
    return *sent;
  }

 private:
  // Whether the packets fed so far hold the advertisement's final flush
  // (or an ERR packet, which the parser reports).
  static Result<bool> advertisement_ended(transport::PktDecoder& scan) {
    for (;;) {
      auto pkt = scan.next();
      if (!pkt) return tl::unexpected(pkt.error());
      if (!*pkt) return false;
      if ((*pkt)->kind == transport::PktKind::flush) return true;
      if ((*pkt)->payload.rfind("ERR ", 0) == 0) return true;
    }
  }

  // The body: the prefix, then the spooled or streamed pack. Returns the
  // bytes sent, told to on_upload as they leave.
  LegStep<std::uint64_t> send_body(UploadIo& io) {
    const PostBody& body = io.body;
    const std::uint64_t total = body.source ? 0 : body.body_len;
    std::uint64_t sent = 0;
    auto put = [&](std::string_view bytes) -> LegStep<void> {
      if (auto w = conn_->write(bytes); !w) return ended(w.error(), "sending the update");
      sent += bytes.size();
      io.on_upload(sent, total);
      return {};
    };
    if (auto ok = put(body.request.body_prefix); !ok) return tl::unexpected(ok.error());
    if (!body.request.pack) return sent;
    std::vector<char> buf(kChunk);
    std::uint64_t spooled = 0;  // of a spooled pack, the bytes read
    for (;;) {
      auto got = next_pack_bytes(body, buf, spooled);
      if (!got) return leg_stop(wire::DeliveryStatus::failed, got.error().message);
      if (*got == 0) return sent;
      if (auto ok = put(std::string_view(buf.data(), *got)); !ok) return tl::unexpected(ok.error());
    }
  }

  // The next bytes of the pack: from the engine's stream, or from the
  // spool (the pack alone, from its offset 0), `spooled` bytes of it read.
  static Result<std::size_t> next_pack_bytes(const PostBody& body, std::vector<char>& buf, std::uint64_t& spooled) {
    if (body.source) return body.source(buf.data(), buf.size());
    const std::uint64_t pack_len = body.body_len - body.request.body_prefix.size();
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), pack_len - spooled));
    if (want == 0) return std::size_t{0};
    auto got = sys::read_at(body.fd.get(), buf.data(), want, spooled);
    if (!got) return tl::unexpected(got.error());
    if (*got == 0) return fail(Errc::os_error, "the pack spool ended before the pack");
    spooled += *got;
    return *got;
  }

  // The connection ended early, or failed (`e`): ssh's stderr says why.
  tl::unexpected<LegStop> ended(const std::optional<Error>& e, const std::string& what) {
    if (e && e->code == Errc::leg_timeout) return leg_stop(wire::DeliveryStatus::transport_failed, e->message);
    if (conn_) (void)conn_->finish();
    const std::string err = conn_ ? conn_->stderr_text() : std::string();
    SshFailure f = classify_ssh_failure(err, job_.ssh->host_key_alias, what);
    return leg_stop(f.status, f.reason);
  }

  const protocol::Job& job_;
  Channel& ch_;
  std::unique_ptr<transport::SshConnection> conn_;
};

}  // namespace

std::unique_ptr<PushLeg> make_ssh_leg(const protocol::Job& job, Channel& ch) {
  return std::make_unique<SshLeg>(job, ch);
}

}  // namespace courier::child
