/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* The `warren` command line, parsed into what the subcommands need. Kept apart from cli.c so
 * that the unit tests can run it without a daemon. Not installed. */

#include <jansson.h>
#include <stdbool.h>

enum cli_command {
	CLI_RUN,
	CLI_PS,
	CLI_INSPECT,
	CLI_EXEC,
	CLI_LOGS,
	CLI_KILL,
	CLI_RM,
	CLI_INFO,
	CLI_DENIALS,
	CLI_WAIT,
	_CLI_COMMAND_MAX,
	_CLI_COMMAND_NONE = -1, /* `warren --help`, `warren --version` */
};

const char *cli_command_to_string(enum cli_command c);
int cli_command_from_string(const char *s);

struct cli_opts {
	enum cli_command command;
	const char *socket;   /* --socket, else NULL */
	bool help, version, json;
	bool wait, remove;    /* run --wait, --rm */
	bool follow;          /* logs -f */
	bool force;           /* rm -f */
	bool interactive;     /* exec -i: the request's stdin is read from ours */
	const char *signal;   /* kill -s, default "TERM"; a number goes out as a JSON number */
	unsigned last;        /* denials --last, default 20 */
	const char *sandbox;  /* denials --sandbox */
	json_t *body;         /* run, exec: the request body the options describe */
	char **args;          /* operands (IDs; for exec, the ID), pointing into argv */
	int n_args;
	char error[256];      /* why cli_parse() failed, for "warren: ..." */
};

/* Parses the whole command line (argv[0] is the program). Returns 0, or -EINVAL with o->error
 * set. o is initialised here; release it with cli_opts_done() either way. Not reentrant:
 * getopt's state is global. */
int cli_parse(int argc, char **argv, struct cli_opts *o);
void cli_opts_done(struct cli_opts *o);

/* The --help text of a command (_CLI_COMMAND_NONE: the program's). */
const char *cli_usage(enum cli_command c);
