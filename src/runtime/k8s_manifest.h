// The Kubernetes objects `primus-cli k8s manifest` writes, as data: an
// Indexed Job whose pods each run `primus-cli direct -- <task>` plus the
// headless Service that gives those pods stable DNS names
// (<name>-<index>.<name>), or a Kubeflow PyTorchJob with Master and Worker
// replicas. Each pod requests its GPUs, mounts a memory-backed /dev/shm, and
// reads the job token from a Secret; the token itself never appears in the
// manifest. In the pods, `direct` finds its node rank and master through the
// in-pod conventions of config/pod_settings.cc (jobset, pytorchjob).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

struct K8sJob {
  std::string name;                  // of the Job/PyTorchJob and the Service; pods are <name>-<index>
  std::string namespace_name = "default";
  std::string kind = "job";          // job (Indexed Job + headless Service) | pytorchjob
  std::string image;
  int nodes = 0;                     // pods, one node agent each
  int gpus_per_node = 0;             // 0: no GPU resources requested
  std::string vendor = "amd";        // amd | nvidia: amd.com/gpu or nvidia.com/gpu
  bool host_network = false;
  std::string service_account;       // "" leaves the namespace's default
  std::vector<std::string> command;  // what each pod runs (PodCommand)
  int master_port = 29500;           // rendezvous port; the control channel uses the next one
  int metrics_port = 0;              // --metrics-port of the pods' agents: a container port "metrics"; 0: none
  int backoff_limit = 0;             // pod failures before the whole job is failed
  std::string shm_size;              // sizeLimit of /dev/shm; "" for none
  std::string platform;              // PRIMUS_DIRECT_PLATFORM in the pods; "" for the kind's own
};

// The key of the token in its Secret.
inline constexpr const char* kTokenKey = "token";

// `binary direct [direct options] -- task args...`.
std::vector<std::string> PodCommand(const std::string& binary, const std::vector<std::string>& direct_options,
                                    const std::string& task, const std::vector<std::string>& task_args);

// "primus-<task>-<5 random characters>": a fresh name per job, valid in DNS.
std::string DefaultJobName(const std::string& task);

// Usage errors (code 2) for what Kubernetes would reject or what cannot work
// (a command argument that is not UTF-8 cannot be written in YAML).
Status ValidateJob(const K8sJob& job);

std::string GpuResourceName(const std::string& vendor);  // "amd.com/gpu", "nvidia.com/gpu"
std::string TokenSecretName(const K8sJob& job);          // "<name>-token"
// Node 0's stable address as the other pods reach it: "<name>-0.<name>"
// (Indexed Job with its headless Service), "<name>-master-0" (PyTorchJob).
std::string MasterAddress(const K8sJob& job);
// The convention the pods read: platform if set, else jobset or pytorchjob.
std::string PodPlatform(const K8sJob& job);

// The objects, in the order they are applied (Service before Job).
std::vector<nlohmann::ordered_json> ManifestDocuments(const K8sJob& job);
// The manifest file: a comment saying what it is and how to create the
// token Secret, then the documents.
std::string RenderManifest(const K8sJob& job, const std::string& note = "");
// The Secret with the token, for kubectl's stdin only.
nlohmann::ordered_json TokenSecret(const K8sJob& job, const std::string& token);

}  // namespace primus::runtime
