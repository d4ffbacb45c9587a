// service-metrics.cpp — a real `git-courier serve` (the shipped binary,
// curl over its Unix socket, the TLS fixture server) read through its
// /metrics as Prometheus reads it: what it counts after deliveries, replays,
// a deadline kill and a journal that cannot be written (X-MET1), and docs/service.md's metrics table held to
// what it exports, both ways, with every label value from a closed set
// (X-MET2). Every wait is on a fact: the end of an event stream, the
// server's announcement of a held POST.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "courier/outcome.hpp"
#include "fixture_server.hpp"
#include "journal_lock.hpp"
#include "journal/journal.hpp"
#include "service_support.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_metrics {

using namespace courier;
using nlohmann::json;

namespace {

struct Scene {
  test::TempDir dir;
  test::FixtureServer fx;
  std::string root;
  std::string source;
  std::unique_ptr<test::ServeProcess> svc;

  Scene() {
    root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    source = root + "/source";
    test::make_source_repo(source, 3);
    fx.create_bare_repo("r");
    svc = std::make_unique<test::ServeProcess>(dir.path() + "/state", root,
                                               std::vector<std::string>{"--ca-file", fx.ca_file()});
    REQUIRE_MESSAGE(svc->up(), "the service did not start listening:\n" << svc->log());
  }
  json body(const std::string& id, const std::string& rev, json more = json::object()) const {
    json b = {{"id", id}, {"repo", source}, {"remote", fx.url("r")}, {"ref", "refs/heads/main"}, {"rev", rev}};
    for (auto& [k, v] : more.items()) b[k] = v;
    return b;
  }
  // Submits and follows the events to the outcome.
  json deliver(const json& b) const {
    test::Http p = svc->post(b);
    REQUIRE_MESSAGE(p.status == 202, p.raw << svc->log());
    auto events = svc->events(b["id"]);
    REQUIRE_FALSE(events.empty());
    return events.back()["outcome"];
  }
};

// One sample of the exposition: its name, its labels, its value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// The exposition read as Prometheus reads it: the families' types (# TYPE)
// and the samples.
struct Exposition {
  std::map<std::string, std::string> types;
  std::vector<Sample> samples;

  explicit Exposition(const std::string& text) {
    std::istringstream in(text);
    static const std::regex type_line(R"(# TYPE (\S+) (\S+))");
    static const std::regex sample_line(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+))");
    static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\",?)");
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_match(line, m, type_line)) {
        types[m[1].str()] = m[2].str();
      } else if (line.rfind("#", 0) == 0 || line.empty()) {
        continue;
      } else if (std::regex_match(line, m, sample_line)) {
        Sample s{m[1].str(), {}, std::strtod(m[4].str().c_str(), nullptr)};
        const std::string labels = m[3].str();
        for (std::sregex_iterator it(labels.begin(), labels.end(), label), end; it != end; ++it) {
          s.labels[(*it)[1].str()] = (*it)[2].str();
        }
        samples.push_back(std::move(s));
      } else {
        FAIL_CHECK("a line Prometheus would not parse: " << line);
      }
    }
  }
  // The family a sample belongs to (a histogram's _bucket, _sum, _count).
  std::string family_of(const std::string& name) const {
    if (types.count(name)) return name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        const std::string base = name.substr(0, name.size() - s.size());
        if (types.count(base) && types.at(base) == "histogram") return base;
      }
    }
    return "";
  }
  // The sum of the samples of `name` whose labels include `match`.
  double sum(const std::string& name, const std::map<std::string, std::string>& match = {}) const {
    double total = 0;
    for (const auto& s : samples) {
      if (s.name != name) continue;
      bool all = true;
      for (const auto& [k, v] : match) all = all && s.labels.count(k) && s.labels.at(k) == v;
      if (all) total += s.value;
    }
    return total;
  }
};

// docs/service.md's "Health and metrics": the metrics table (name -> type,
// label names) and the label table (label -> its values' cell).
struct Documented {
  std::map<std::string, std::pair<std::string, std::set<std::string>>> metrics;
  std::map<std::string, std::string> label_values;
};

std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream in(row.substr(1));
  for (std::string c; std::getline(in, c, '|');) {
    const auto a = c.find_first_not_of(' ');
    const auto b = c.find_last_not_of(' ');
    cells.push_back(a == std::string::npos ? "" : c.substr(a, b - a + 1));
  }
  return cells;
}

Documented read_docs() {
  const std::string text = test::read_file(test::source_path("docs/service.md"));
  const auto from = text.find("### Health and metrics");
  REQUIRE(from != std::string::npos);
  const std::string section = text.substr(from, text.find("\n## ", from) - from);
  Documented d;
  static const std::regex metric_cell(R"(`(git_courier_[a-z_]+)(\{([a-z_,]*)\})?`)");
  static const std::regex label_cell(R"(`([a-z_]+)`)");
  std::istringstream in(section);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    auto cells = cells_of(line);
    REQUIRE(cells.size() >= 2);
    std::smatch m;
    if (std::regex_match(cells[0], m, metric_cell)) {
      std::set<std::string> labels;
      std::stringstream names(m[3].str());
      for (std::string l; std::getline(names, l, ',');) labels.insert(l);
      d.metrics[m[1].str()] = {cells[1], labels};
    } else if (std::regex_match(cells[0], m, label_cell)) {
      d.label_values[m[1].str()] = cells[1];
    }
  }
  return d;
}

// The words a label-table cell lists in backquotes.
std::set<std::string> backquoted(const std::string& cell) {
  std::set<std::string> out;
  static const std::regex word(R"(`([^`]+)`)");
  for (std::sregex_iterator it(cell.begin(), cell.end(), word), end; it != end; ++it) out.insert((*it)[1].str());
  return out;
}

// Whether `value` is in the closed vocabulary of `label` (the docs' label
// table, or the product's own word lists where the table points to them).
bool closed_value(const Documented& d, const std::string& label, const std::string& value) {
  if (!d.label_values.count(label)) return false;
  const std::set<std::string> listed = backquoted(d.label_values.at(label));
  if (label == "outcome") return outcome_from_name(value).has_value();
  if (label == "remote_effect") return remote_effect_from_name(value).has_value() && listed.count(value);
  if (label == "phase") return listed.count(value) > 0;
  if (label == "code") return std::regex_match(value, std::regex("[1-5][0-9][0-9]"));
  if (label == "le") {
    char* end = nullptr;
    const double bound = std::strtod(value.c_str(), &end);
    return value == "+Inf" || (end != value.c_str() && *end == '\0' && bound >= 0.005 && bound <= 30);
  }
  return false;
}

// Whether the journal has the delivery's dispatched entry.
bool dispatched(const std::string& path, const std::string& id) {
  auto j = journal::open_sqlite(path);
  if (!j) return false;
  auto r = (*j)->find(id);
  return r && *r && (*r)->last(journal::Step::dispatched).has_value();
}

}  // namespace

TEST_SUITE("service") {
  TEST_CASE(
      "X-MET1 J1: a delivery whose journal cannot take post_started fails and sends nothing, and "
      "git_courier_journal_errors_total counts it") {
    Scene s;
    s.fx.hold(test::RequestMatch::next("GET", "info/refs"));
    REQUIRE(s.svc->post(s.body("met-j", "HEAD")).status == 202);
    REQUIRE(s.fx.wait_for_held(30'000).has_value());
    REQUIRE(test::wait_for_fact([&] { return dispatched(s.svc->journal(), "met-j"); }, 30'000));
    json o;
    {
      const test::HeldJournalLock lock(s.svc->journal());  // from here to the outcome
      s.fx.release();
      auto events = s.svc->events("met-j");
      REQUIRE_FALSE(events.empty());
      o = events.back()["outcome"];
    }
    CHECK_MESSAGE(o["outcome"] == "failed", o.dump());
    CHECK(o["journal_error"].is_string());
    CHECK(s.fx.count().count("POST /r.git/git-receive-pack") == 0);
    const Exposition e(s.svc->get("/metrics").raw);
    CHECK_MESSAGE(e.sum("git_courier_journal_errors_total") == 1, "a journal error was not counted");
    CHECK(e.sum("git_courier_deliveries_total", {{"outcome", "failed"}, {"remote_effect", "none"}}) == 1);
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE(
      "X-MET1: /metrics counts the deliveries that ran, and a replayed id in replays_total only: two deliveries, two "
      "replays, one deadline kill") {
    Scene s;
    CHECK(s.deliver(s.body("met-a", "HEAD~1"))["outcome"] == "delivered");
    CHECK(s.deliver(s.body("met-b", "HEAD"))["outcome"] == "delivered");
    for (int i = 0; i < 2; ++i) {
      test::Http replay = s.svc->post(s.body("met-b", "HEAD"));
      REQUIRE(replay.status == 200);
      CHECK(replay.body["replayed"] == true);
    }
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    test::Http late = s.svc->post(s.body("met-c", "HEAD", {{"ref", "refs/heads/late"}, {"deadline", "3s"}}));
    REQUIRE(late.status == 202);
    REQUIRE(s.fx.wait_for_held(30'000).has_value());
    CHECK(s.svc->events("met-c").back()["outcome"]["outcome"] == "deadline_killed");
    s.fx.release();
    CHECK(s.fx.count().count("POST /r.git/git-receive-pack") == 3);

    const Exposition e(s.svc->get("/metrics").raw);
    CHECK_MESSAGE(e.sum("git_courier_deliveries_total") == 3, "a replay was counted as a delivery");
    CHECK(e.sum("git_courier_deliveries_total", {{"outcome", "delivered"}, {"remote_effect", "applied"}}) == 2);
    CHECK(e.sum("git_courier_deliveries_total", {{"outcome", "deadline_killed"}}) == 1);
    CHECK(e.sum("git_courier_replays_total", {{"outcome", "delivered"}}) == 2);
    CHECK(e.sum("git_courier_deadline_kills_total") == 1);
    CHECK(e.sum("git_courier_journal_errors_total") == 0);
    CHECK(e.sum("git_courier_lane_wait_seconds_count") == 3);
    CHECK(e.sum("git_courier_phase_seconds_count", {{"phase", "spawn"}}) == 3);  // cold children (no --warm)
    CHECK(e.sum("git_courier_phase_seconds_count", {{"phase", "upload"}}) >= 2);
    CHECK(e.sum("git_courier_phase_seconds_count", {{"phase", "stop_confirm"}}) == 3);
    CHECK(e.sum("git_courier_queue_limit") == 256);
    CHECK(e.sum("git_courier_live_deliveries") == 0);
    CHECK(e.sum("git_courier_unconfirmed_children") == 0);
    CHECK(e.sum("git_courier_poisoned_lanes") == 0);
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE(
      "X-MET2: docs/service.md's metrics table and a real service's /metrics agree both ways (names, types, label "
      "names), and every label value is from a closed set") {
    Scene s;
    CHECK(s.deliver(s.body("met-d", "HEAD"))["outcome"] == "delivered");
    REQUIRE(s.svc->post(s.body("met-d", "HEAD")).status == 200);  // a replay
    CHECK(s.svc->get("/v1/deliveries/met-none").status == 404);
    const Exposition e(s.svc->get("/metrics").raw);
    const Documented d = read_docs();
    REQUIRE(d.metrics.size() >= 10);

    std::map<std::string, std::set<std::string>> exported_labels;
    for (const auto& sample : e.samples) {
      const std::string family = e.family_of(sample.name);
      CHECK_MESSAGE(!family.empty(), "a sample of no declared family: " << sample.name);
      auto& names = exported_labels[family];
      for (const auto& [label, value] : sample.labels) {
        if (label != "le") names.insert(label);
        CHECK_MESSAGE(closed_value(d, label, value),
                      "label " << label << "=\"" << value << "\" of " << sample.name << " is not from a closed set");
      }
    }
    for (const auto& [name, type] : e.types) {
      CAPTURE(name);
      REQUIRE_MESSAGE(d.metrics.count(name), "exported but not documented in docs/service.md: " << name);
      CHECK_MESSAGE(d.metrics.at(name).first == type, "documented as " << d.metrics.at(name).first);
      CHECK_MESSAGE(exported_labels.count(name), "a family with no sample: its labels cannot be compared");
      CHECK(exported_labels[name] == d.metrics.at(name).second);
    }
    for (const auto& documented : d.metrics) {
      CHECK_MESSAGE(e.types.count(documented.first),
                    "documented in docs/service.md but not exported: " << documented.first);
    }
    // Every phase the docs list has its series.
    const std::set<std::string> phases = backquoted(d.label_values.at("phase"));
    CHECK(phases.size() == 5);
    for (const auto& phase : phases) {
      CAPTURE(phase);
      bool found = false;
      for (const auto& sample : e.samples)
        found = found || (sample.labels.count("phase") && sample.labels.at("phase") == phase);
      CHECK_MESSAGE(found, "a documented phase is not exported: " << phase);
    }
    CHECK(s.svc->stop() == 0);
  }
}

}  // namespace integration_service_metrics
