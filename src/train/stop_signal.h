// Preemption: SIGTERM (what SLURM and Kubernetes send before a kill, with a grace period), SIGINT (Ctrl-C) and
// SIGUSR1 (SLURM's --signal) ask a training run to finish its current step, save a checkpoint of it and exit with
// 128 + the signal's number; a second such signal stops the process at once (the default action). Only a flag is
// set; the trainer polls it between steps.
//  - Signals within kSameRequestSeconds of the first are the same request, not a second one: a launcher forwarding
//    SIGTERM to a process group that also got it, a parent-death signal beside the launcher's own.
//  - Until arm_stop_signals() (the step loop's start) there is nothing to save: a stop signal ends the process at
//    once, with one line (a rank still connecting to a dead launcher's store never waits out --ddp_timeout).
#pragma once
#include <string>

namespace bt::train {

inline constexpr double kSameRequestSeconds = 1.0;

// Installs the handlers (idempotent), clears any request of an earlier run in this process and disarms.
void install_stop_signals();
// From now on a stop signal is a request to save and stop (before: an immediate stop).
void arm_stop_signals();
// 0, or the first stop signal received since install_stop_signals().
int stop_signal_received();
// "SIGTERM", "SIGINT", "SIGUSR1", or "signal N".
std::string signal_name(int signo);

}  // namespace bt::train
