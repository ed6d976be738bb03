// A stand-in libnccl.so.2 for the preflight tests: it answers ncclGetVersion
// like NCCL 2.26.6 and carries VCCL's marker string, as sii-research/VCCL's
// builds do, so `preflight --software` must recognise it through
// LD_LIBRARY_PATH exactly as the workers would load it.
extern "C" {

__attribute__((used)) const char kBuildMarker[] = "VCCL version 2.26.6-vccl";

int ncclGetVersion(int* version) {
  *version = 22606;
  return 0;
}
}
