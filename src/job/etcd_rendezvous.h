// Which agent of a job coordinates it, and where it listens, decided through
// an etcd server (torchrun's `--rdzv-backend etcd-v2 --rdzv-endpoint
// host:port --rdzv-id ID`). With it, no node needs to be told in advance
// that it is node 0 or what the master address is: every agent asks etcd,
// the first one becomes the coordinator and the others learn its address.
//
// The protocol uses etcd's v2 keys API (etcd 3.4 serves it only when started
// with --enable-v2=true), one key per job:
//
//   <prefix>/<run_id>/coordinator = "host:port:nonce"
//
// Each agent tries to create the key (prevExist=false). The one that
// succeeds is the coordinator; the others read the key and get host:port.
// The nonce makes the value unique to one election, so removing the key is a
// compare-and-delete that can never remove a newer coordinator's key.
//
// A key left behind by a coordinator that crashed must not block a new job
// with the same id. Two things bound that, because neither alone suffices:
//   - the key has a TTL that the coordinator refreshes every ttl/3 while the
//     job runs, so a dead coordinator's key expires within ttl_s whatever
//     went wrong (host gone, network cut);
//   - a member whose connection to the published address is refused knows
//     nothing listens there any more; it withdraws that exact value and
//     elects again at once, instead of waiting for the TTL. Only a refusal
//     counts: a timeout may be this node's own network, and a member with a
//     bad route must not depose a healthy coordinator.
//
// An etcd outage longer than the TTL must not give one job two coordinators.
// The key expires while the coordinator cannot refresh it; a late agent with
// the same run id would then win the election and run rank 0's workers a
// second time. Two things prevent that:
//   - the fence, <prefix>/<run_id>/fence, without a TTL: the value of the
//     last agent that took office. An agent that wins the election first
//     reads it; when it names another coordinator that still proves itself
//     on its control port (the channel's handshake, with the job token), the
//     winner withdraws its claim and joins that one as a member (a late
//     joiner, which is what it is). A coordinator that cannot prove itself
//     (gone, unreachable, or something else listening there) is replaced,
//     and the fence then names the new one;
//   - the coordinator re-claims its key at its next refresh once etcd is
//     back (RefreshCoordinator re-creates an expired key), so late joiners
//     find it again without any fencing at all.
//
// How the agent uses it (run_workers, before opening the job link):
//   1. ElectCoordinator(etcd, run_id, this host's reachable address, the
//      control port), with the join timeout.
//   2. coordinator: open the job link as node 0 on that port at once (a
//      member refused there for long takes the coordinator for dead); call
//      RefreshCoordinator every etcd.RefreshInterval() seconds until the job
//      ends (a failed refresh is a warning: the running job does not need
//      the key, only late joiners do), then ReleaseCoordinator.
//   3. member: open the job link towards point.host:point.port. If every
//      connection there is refused for a few seconds (longer than the
//      coordinator needs to open its port), ReleaseCoordinator(etcd, run_id,
//      point) and elect again: this agent may become the coordinator.
#pragma once

#include <functional>
#include <string>

#include "util/error.h"

namespace primus::job {

struct EtcdSettings {
  std::string endpoint;                // "host:port" or "http://host:port" (port 2379 when omitted)
  std::string prefix = "/primus/rdzv"; // key directory; letters, digits, - _ . between slashes
  double ttl_s = 10;                   // the coordinator key's lifetime between refreshes

  double RefreshInterval() const { return ttl_s / 3; }
};

// Where the job's control channel is.
struct RendezvousPoint {
  bool coordinator = false;  // this agent won: it serves the control channel
  std::string host;          // the coordinator's address, as it published it
  int port = 0;              // its control port
  std::string value;         // the key's value ("host:port:nonce"), for compare-and-delete
  bool fenced = false;       // this agent won the key but the fence named a live coordinator: it joins that one
};

// A run id becomes part of an etcd key: letters, digits, '-', '_' and '.'
// only (at most 128 characters, not "." or ".."). A ConfigError otherwise.
Status ValidateRunId(const std::string& run_id);

// Every agent of job `run_id` calls this with the address the others can
// reach it at and its control port. Retries while etcd cannot be reached
// (it may be starting) until `timeout_s`, then an UnavailableError (exit 4)
// naming the endpoint; an etcd without the v2 API is an UnavailableError at
// once, saying to start etcd with --enable-v2=true.
// `in_office`: whether the coordinator the fence names still runs the job;
// the agent proves it with the control channel's handshake (job_link.h,
// CoordinatorProvesItself), so a program that merely listens on that port
// is no coordinator. Unset: a connection accepted there counts (tests).
using InOffice = std::function<bool(const std::string& host, int port)>;
Result<RendezvousPoint> ElectCoordinator(const EtcdSettings& etcd, const std::string& run_id,
                                         const std::string& self_host, int self_port, double timeout_s,
                                         const InOffice& in_office = nullptr);

// The coordinator's keep-alive: restarts the key's TTL if it still holds
// `self.value`, and re-creates it with that value when it expired (an etcd
// outage longer than the TTL; the result is then kReclaimed). An error when
// etcd cannot be reached or another agent holds the key (then late joiners
// cannot find this coordinator until that one withdraws, see the fence).
enum class Refreshed { kRefreshed, kReclaimed };
Result<Refreshed> RefreshCoordinator(const EtcdSettings& etcd, const std::string& run_id, const RendezvousPoint& self,
                                     double timeout_s);

// A member's view of a coordinator's published address: false only when
// connections are refused for `patience_s` in a row (nothing listens there
// any more). A timeout or no route counts as alive: it may be this node's own
// network, and a node with a bad route must not depose a healthy coordinator.
bool CoordinatorAnswers(const std::string& host, int port, double patience_s = 3);
// The fence's view (it has no TTL, so it needs evidence of life): true only
// when a connection is accepted within `patience_s`; a refusal is an answer
// at once (false).
bool CoordinatorAccepts(const std::string& host, int port, double patience_s = 3);

// Removes the key, and the fence, where they still hold `point.value`: the
// coordinator when its job ends, or a member whose connection to `point` was
// refused. A key that is already gone or holds another value is left alone
// (success).
Status ReleaseCoordinator(const EtcdSettings& etcd, const std::string& run_id, const RendezvousPoint& point,
                          double timeout_s);

}  // namespace primus::job
