# commands.sh - sourced: commands BIN prints the subcommands that BIN --help
# lists, one a line (for the generated docs and their tests).
# shellcheck shell=bash
commands() {
  "$1" --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'
}
