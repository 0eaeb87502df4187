// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Execute runs the command line and makes sure every error reaches stderr exactly once. A run reports its own
// errors (reportError, fail) and marks them as reported; any other error is cobra rejecting the command line
// (a flag, an argument, a subcommand), which gets one line naming the command and pointing to its --help.
func Execute(cmd *cobra.Command) error {
	failed, err := cmd.ExecuteC()
	if err == nil {
		return nil
	}
	if failed == nil {
		failed = cmd
	}
	var done *reported
	if !errors.As(err, &done) {
		path := failed.CommandPath()
		fmt.Fprintf(failed.ErrOrStderr(), "%s: error: %s; see `%s --help`\n", path, strings.Join(strings.Fields(err.Error()), " "), path)
	}
	return err
}

// reported marks an error that is already on stderr.
type reported struct{ err error }

func (r *reported) Error() string { return r.err.Error() }
func (r *reported) Unwrap() error { return r.err }

func markReported(err error) error {
	if err == nil {
		return nil
	}
	return &reported{err}
}

// flagError rewrites pflag's parse errors to say what was wrong and which flags the command accepts.
func flagError(cmd *cobra.Command, err error) error {
	var (
		notExist      *pflag.NotExistError
		valueRequired *pflag.ValueRequiredError
		invalidValue  *pflag.InvalidValueError
	)
	switch {
	case errors.As(err, &notExist):
		name := "--" + notExist.GetSpecifiedName()
		if short := notExist.GetSpecifiedShortnames(); short == notExist.GetSpecifiedName() {
			name = "-" + short
		} else if short != "" {
			name = fmt.Sprintf("-%s (in -%s)", notExist.GetSpecifiedName(), short)
		}
		return fmt.Errorf("unknown flag %s%s; accepted flags: %s", name, elsewhere(cmd, notExist.GetSpecifiedName()), acceptedFlags(cmd))
	case errors.As(err, &valueRequired):
		f := valueRequired.GetFlag()
		return fmt.Errorf("flag --%s needs a value: %s", f.Name, f.Usage)
	case errors.As(err, &invalidValue):
		f := invalidValue.GetFlag()
		if f.Value.Type() == "bool" {
			return fmt.Errorf("flag --%s=%s is not a boolean; accepted: --%s, --%s=true or --%s=false", f.Name, invalidValue.GetValue(), f.Name, f.Name, f.Name)
		}
		return fmt.Errorf("flag --%s=%s: %v; accepted: %s", f.Name, invalidValue.GetValue(), errors.Unwrap(invalidValue), f.Usage)
	}
	return fmt.Errorf("%w; accepted flags: %s", err, acceptedFlags(cmd))
}

// acceptedFlags lists the flags cmd takes, help included.
func acceptedFlags(cmd *cobra.Command) string {
	var names []string
	add := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if f.Shorthand != "" {
			names = append(names, "-"+f.Shorthand+"/--"+f.Name)
		} else {
			names = append(names, "--"+f.Name)
		}
	}
	cmd.LocalFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	return strings.Join(names, ", ")
}

// elsewhere names the subcommands that define a flag cmd does not know.
func elsewhere(cmd *cobra.Command, name string) string {
	var owners []string
	for _, sub := range cmd.Commands() {
		if sub.Flags().Lookup(name) != nil || (len(name) == 1 && sub.Flags().ShorthandLookup(name) != nil) {
			owners = append(owners, "`"+sub.CommandPath()+"`")
		}
	}
	if len(owners) == 0 {
		return ""
	}
	return " (a flag of " + strings.Join(owners, ", ") + ")"
}
