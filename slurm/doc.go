// Package slurm is sbench's knowledge of Slurm: a task's identity from the
// SLURM_* environment, hostlist expansion and compression in Slurm's order,
// and the commands (sbatch, squeue, scontrol, sacct, scancel) behind one exec
// seam so that tests can replay captured outputs.
//
// # Client
//
// Client submits, watches and cancels jobs with the commands a user has,
// through a Runner (Exec in production, a fake in tests). It needs no
// slurmdbd: a job's state comes from squeue and `scontrol show job` while
// the controller remembers the job (MinJobAge after its end), then from the
// jobcomp/filetxt log, then from sacct if accounting is on. A job none of
// them knows is reported as StateUnknown with the reason — a result is never
// silently dropped.
//
// Commands are run with argv as is, never through a shell; job ids are
// checked before they reach argv.
//
// # Records
//
// RecordScanner reads Slurm's Key=Value output (scontrol's one-line and
// multi-line forms, the jobcomp log) in the shape of bufio.Scanner; a
// malformed record is a *SyntaxError and the scan goes on.
//
// It has no cgo and no dependency on the archive or the reports, so the
// runner can use it on compute nodes.
package slurm
