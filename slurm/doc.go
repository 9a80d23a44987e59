// Package slurm is sbench's knowledge of Slurm: a task's identity from the
// SLURM_* environment, hostlist expansion and compression in Slurm's order,
// and the commands (sbatch, squeue, scontrol, sacct) behind one exec seam so
// that tests can replay captured outputs.
//
// It has no cgo and no dependency on the archive or the reports, so the
// runner can use it on compute nodes.
package slurm
