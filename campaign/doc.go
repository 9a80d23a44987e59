// Package campaign is the campaign: the TOML schema a user writes, its
// validation (every problem reported at once, each with file:line:col and
// the key path, a string of a list at the string; every value the schema
// does not take refused, never dropped), the expansion of sweeps into variants, the plan of Slurm jobs and
// steps, and the sbatch scripts rendered from an embedded text/template
// (templates/sbatch.tmpl) that a site may override.
//
// Every value that reaches a script is either shell-quoted by the template
// functions or restricted to a safe character set (names used in paths and
// #SBATCH lines); a campaign can never inject shell code into a script.
// Rendering is deterministic, so rendered scripts can be golden-tested and
// diffed.
package campaign
