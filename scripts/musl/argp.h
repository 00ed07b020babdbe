/* Declarations only: elfutils' lib/color.c includes argp.h; libelf never
 * calls into argp, so nothing here is ever linked. */
#ifndef TRIG_ARGP_STUB_H
#define TRIG_ARGP_STUB_H
#include <stdio.h>
#include <errno.h>
typedef int error_t;
struct argp_state;
struct argp_option {
	const char *name; int key; const char *arg; int flags; const char *doc; int group;
};
typedef error_t (*argp_parser_t)(int key, char *arg, struct argp_state *state);
struct argp_child;
struct argp {
	const struct argp_option *options; argp_parser_t parser; const char *args_doc;
	const char *doc; const struct argp_child *children;
	char *(*help_filter)(int key, const char *text, void *input); const char *argp_domain;
};
struct argp_child { const struct argp *argp; int flags; const char *header; int group; };
struct argp_state {
	const struct argp *root_argp; int argc; char **argv; int next; unsigned flags;
	unsigned arg_num; int quoted; void *input; void **child_inputs; void *hook;
	char *name; FILE *err_stream; FILE *out_stream; void *pstate;
};
#define OPTION_ARG_OPTIONAL 0x1
#define OPTION_HIDDEN 0x2
#define ARGP_ERR_UNKNOWN E2BIG
#define ARGP_KEY_ARG 0
#define ARGP_KEY_INIT 0x1000003
#define ARGP_HELP_SEE 0x10
#define ARGP_HELP_EXIT_ERR 0x100
#define ARGP_HELP_STD_ERR (ARGP_HELP_SEE | ARGP_HELP_EXIT_ERR)
extern void argp_help(const struct argp *, FILE *, unsigned, char *);
extern void argp_error(const struct argp_state *, const char *, ...);
extern void argp_failure(const struct argp_state *, int, int, const char *, ...);
extern error_t argp_parse(const struct argp *, int, char **, unsigned, int *, void *);
extern const char *argp_program_version;
#endif
