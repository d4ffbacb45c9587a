// resume.hpp — the service's resume after a crash: which deliveries a
// killed `git-courier serve` left queued in its journal, and the request
// that submits each again with its id and its first deadline (D1, J4).
//
// At startup, before the Executor is made (its recovery finishes these
// `interrupted`, remote_effect none), the service calls find_left_behind();
// once the Executor exists, resume_left_behind() submits each again. A
// delivery that was dispatched but whose POST never began is among them:
// recovery stops its child and finishes it `interrupted`, none, and it
// runs again as the next attempt (the id table of DESIGN §6: "a service
// resumes these by itself"). One whose POST may have been sent is not:
// recovery finishes it `interrupted`, `possible`, with a read-back, and it
// is never sent again unless submitted again (a compare-and-swap).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "courier/courier.hpp"
#include "courier/result.hpp"
#include "courier/update_mode.hpp"
#include "journal/journal.hpp"
#include "service/credential_scope.hpp"
#include "service/deliveries.hpp"

namespace courier::service {

// What the service journals with each delivery (DeliveryRequest::
// journal_note) so that it can submit it again after a crash: the
// credential's name (never a key), the update mode and whether remote
// progress was asked. The object's "service": true is what marks a
// delivery as the service's (a CLI push on the same journal has no note).
struct ServiceNote {
  std::optional<std::string> credential;  // the name of a configured credential; none: no credential
  UpdateMode update = UpdateMode::fast_forward;
  bool remote_progress = false;
  // A delivery of several refs (J4: the whole set is the request): every
  // update, whether they move together, and the push options. The
  // journal's submission names the first ref only, so the set is kept here
  // to resubmit the delivery whole.
  std::vector<RefUpdate> updates;
  Atomicity atomic = Atomicity::automatic;
  std::vector<std::string> push_options;
};

// The note's text: {"credential": NAME|null, "update": WORD,
// "remote_progress": BOOL, "service": true}, with "updates": [{"ref",
// "oid", "update", "expect_old"}], "atomic": WORD and "push_options":
// [...] when the delivery has them.
std::string note_text(const ServiceNote& n);
// The note read back, or nullopt when `note` is not the service's (no
// "service": true) or names an update mode this program does not know.
std::optional<ServiceNote> note_from(std::string_view note);

// A delivery the service had queued when it stopped without finishing it.
struct LeftBehind {
  journal::Submission submission;  // its latest attempt: id, what, where, deadline_unix_ms, note
  ServiceNote note;
  // Its dispatch claim was journalled (a child may have existed): resumed
  // only once recovery finished it `interrupted` with remote_effect none.
  bool claimed = false;
};

// Every delivery of the journal's open work that a previous service left
// queued or running with nothing sent: its latest attempt has no
// `post_started` entry (its POST never began: remote_effect none) and no
// `revoke_requested` (a revocation is final, J1), its
// submitting process is gone (journal::is_alive: pid + start time + boot
// id, J3), and its note is the service's. Oldest first. Call it before the
// Executor is made: its recovery finishes them, after which open_work()
// no longer lists them. Errors: journal_failed (the journal could not be read).
Result<std::vector<LeftBehind>> find_left_behind(journal::Journal& j);

// The submission that resumes `lb`: the same id, repo, remote, ref and
// object, expect_old, update mode and remote progress, its credential by
// name (with what `credentials` says that name stands for now), and its
// first deadline (deadline_unix_ms: one that passed while the service was
// down ends it deadline_killed before dispatch, saying so). Errors:
// invalid_argument (the credential it named is no longer configured: it is
// not sent without one, nor with another; or the remote is outside that
// credential's scope; the journalled request refused by validate(), with
// the service's `allow_http_loopback`).
Result<SubmitInput> resubmission(const LeftBehind& lb, const ServiceCredentials& credentials,
                                 bool allow_http_loopback = false);

// Submits each left-behind delivery again through the registry (J4: the
// next attempt of an id interrupted with nothing sent; a claimed one only
// when the journal says recovery finished it none and confirmed), logging each
// (`resumed`, or `resume_refused` with why: it then stays `interrupted`,
// remote_effect none, in the journal). Returns how many were submitted.
std::size_t resume_left_behind(const std::vector<LeftBehind>& left, Deliveries& deliveries,
                               const ServiceCredentials& credentials, bool allow_http_loopback = false);

}  // namespace courier::service
