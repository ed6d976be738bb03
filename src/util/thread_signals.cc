#include "util/thread_signals.h"

#include <pthread.h>
#include <signal.h>

namespace primus {

void BlockAllSignalsInThisThread() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

}  // namespace primus
