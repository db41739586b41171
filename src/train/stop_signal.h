// Preemption: SIGTERM (what SLURM and Kubernetes send before a kill, with a grace period), SIGINT (Ctrl-C) and
// SIGUSR1 (SLURM's --signal) ask a training run to finish its current step, save a checkpoint of it and exit with
// 128 + the signal's number; a second such signal stops the process at once (the default action). Only a flag is
// set in the handler; the trainer polls it between steps.
#pragma once
#include <string>

namespace bt::train {

// Installs the handlers (idempotent) and clears any request of an earlier run in this process.
void install_stop_signals();
// 0, or the first stop signal received since install_stop_signals().
int stop_signal_received();
// "SIGTERM", "SIGINT", "SIGUSR1", or "signal N".
std::string signal_name(int signo);

}  // namespace bt::train
