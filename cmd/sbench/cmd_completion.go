package main

// Shell completion: "sbench completion bash|zsh|fish" writes the script,
// and the filter flags complete their values from the archive.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/store"
)

func newCompletionCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Write the shell completion script for bash, zsh or fish",
		Long: `Write the shell completion script for bash, zsh or fish on stdout.

The scripts complete commands, flags and, from the archive (--db, else
$SBENCH_DB, else ./sbench.db), the values of --campaign, --benchmark and
--label; --status completes to ok, failed and invalid. With no archive they
suggest nothing. "make install" puts the three scripts where each shell
finds them by itself:
  PREFIX/share/bash-completion/completions/sbench
  PREFIX/share/zsh/site-functions/_sbench
  PREFIX/share/fish/vendor_completions.d/sbench.fish

Bash needs the bash-completion package for the installed script; sourcing
the output works without it.`,
		Example: `  source <(sbench completion bash)                      # this bash session
  sbench completion bash > ~/.local/share/bash-completion/completions/sbench
  sbench completion zsh > "${fpath[1]}/_sbench"           # then: compinit
  sbench completion fish > ~/.config/fish/completions/sbench.fish`,
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
	shell := func(name, how string, gen func(root *cobra.Command, w io.Writer) error) *cobra.Command {
		return &cobra.Command{
			Use:                   name,
			Short:                 "Write the completion script for " + name,
			Long:                  "Write the completion script for " + name + " on stdout.\n\n" + how,
			Example:               "  sbench completion " + name,
			Args:                  cobra.NoArgs,
			DisableFlagsInUseLine: true,
			ValidArgsFunction:     cobra.NoFileCompletions,
			RunE: func(c *cobra.Command, args []string) error {
				if err := gen(c.Root(), e.stdout); err != nil {
					return fmt.Errorf("write the %s completion script: %w", name, err)
				}
				return nil
			},
		}
	}
	addSubcommands(c,
		shell("bash", `Load it in this session with: source <(sbench completion bash)
For every session, with the bash-completion package installed:
  sbench completion bash > ~/.local/share/bash-completion/completions/sbench`,
			func(root *cobra.Command, w io.Writer) error { return root.GenBashCompletionV2(w, true) }),
		shell("zsh", `Write it as _sbench in a directory of $fpath, then start a new shell (or
run compinit). If completion is not enabled yet, add "autoload -U compinit;
compinit" to ~/.zshrc.`,
			func(root *cobra.Command, w io.Writer) error { return root.GenZshCompletion(w) }),
		shell("fish", `Load it in this session with: sbench completion fish | source
For every session:
  sbench completion fish > ~/.config/fish/completions/sbench.fish`,
			func(root *cobra.Command, w io.Writer) error { return root.GenFishCompletion(w, true) }),
	)
	return c
}

// completionTimeout bounds a completion's read of the archive: a shell
// waits for it at every TAB.
const completionTimeout = 2 * time.Second

// completeFilterFlags makes the filter flags of c and every command under
// it complete their values: --system, --campaign, --benchmark and --label
// from the archive, --status from the statuses. A flag a command does not
// have is skipped.
func completeFilterFlags(c *cobra.Command) {
	register := func(name string, f cobra.CompletionFunc) {
		if c.Flags().Lookup(name) != nil {
			// Registering twice is the only error; the first one stays.
			_ = c.RegisterFlagCompletionFunc(name, f)
		}
	}
	// Campaigns of runs and of jobs (status --campaign follows jobs).
	register("campaign", archiveCompletion(false, func(ctx context.Context, db *store.DB) ([]string, error) {
		return db.Campaigns(ctx)
	}))
	register("system", archiveCompletion(true, func(ctx context.Context, db *store.DB) ([]string, error) {
		inv, err := db.Inventory(ctx)
		return inv.Systems, err
	}))
	register("benchmark", archiveCompletion(true, func(ctx context.Context, db *store.DB) ([]string, error) {
		inv, err := db.Inventory(ctx)
		return inv.Benchmarks, err
	}))
	register("label", archiveCompletion(false, func(ctx context.Context, db *store.DB) ([]string, error) {
		inv, err := db.Inventory(ctx)
		var kvs []string
		for k, vs := range inv.Labels {
			for _, v := range vs {
				kvs = append(kvs, k+"="+v)
			}
		}
		sort.Strings(kvs)
		return kvs, err
	}))
	register("status", func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeFrom([]string{"ok", "failed", "invalid"}, true, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	for _, sub := range c.Commands() {
		completeFilterFlags(sub)
	}
}

// archiveCompletion completes a flag's value with names that the archive
// holds. It never fails: no archive, or one it cannot read, suggests
// nothing. A list flag (comma-separated) completes its last item.
func archiveCompletion(list bool, names func(context.Context, *store.DB) ([]string, error)) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeFrom(archiveNames(c, names), list, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// archiveNames reads names from the archive c's --db names, or returns nil.
func archiveNames(c *cobra.Command, names func(context.Context, *store.DB) ([]string, error)) []string {
	f := c.Flag("db")
	if f == nil || f.Value.String() == "" {
		return nil
	}
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	db, err := store.OpenReadOnly(f.Value.String())
	if err != nil {
		return nil
	}
	defer db.Close()
	out, err := names(ctx, db)
	if err != nil {
		return nil
	}
	return out
}

// completeFrom returns the names that start with what is typed. For a
// comma-separated list, the items already typed are kept in front and not
// offered again.
func completeFrom(names []string, list bool, toComplete string) []cobra.Completion {
	head, last := "", toComplete
	typed := map[string]bool{}
	if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
		for _, p := range strings.Split(head, ",") {
			typed[strings.TrimSpace(p)] = true
		}
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, last) && !typed[n] {
			out = append(out, head+n)
		}
	}
	return out
}
