// Package soak is bgcmd's proof under load and faults. It holds tests only,
// all driving the real bgcmd binary (built once per test run) the way a user
// or an agent host does:
//
//   - TestSoak: thousands of jobs through `bgcmd run` and detached
//     supervisors, 16 at a time, a deterministic mix (succeed, fail with a
//     code, print megabytes, hit the cap, time out, ignore SIGTERM, fork
//     grandchildren, get killed, die by a signal), while the harness SIGKILLs
//     hosts (`bgcmd run --wait`) and supervisors at random moments and
//     restarts them. Afterwards it reconciles and checks the invariants — no
//     job left running, one terminal event per job, every byte banked exactly
//     (sha256 against what the generator printed), counters equal to the
//     truth computed by SQL, no process of any job left, the harness's file
//     descriptors back to their starting count, PRAGMA integrity_check ok —
//     and prints them as figures. BGCMD_SOAK_JOBS and BGCMD_SOAK_DURATION
//     size it (a short run by default; `make soak` runs the full one and
//     writes the figures to bench/SOAK.md through BGCMD_SOAK_SUMMARY).
//   - TestRefusals*: hostile starts refused through the CLI (exit 3 and the
//     reason on stderr) and through the MCP tools (isError with the hint).
//   - TestDiskFull, TestStartOnFullDisk, TestDatabaseLocked*: the home on a
//     small tmpfs filling up mid-run or full at a start (skipped where the
//     machine does not allow mounting), and the database held locked by
//     another process.
//   - Regression tests for what the soak found, each reproducing one crash
//     or fault deterministically: TestDetachedJobKeepsSignalDefaults,
//     TestReconcilerKilledAfterBanking, TestWaitNoticesDeadSupervisor.
//   - BenchmarkCLIRun and the baselines the other packages lack, gathered
//     into bench/REPORT.md by `make bench`.
//
// No test depends on wall-clock speed: waits poll with deadlines, and the
// random moments at which processes are killed only decide what happens,
// never whether a check passes.
package soak
