/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the libFuzzer targets share: the generated programs the unit tests model on the fake
 * device (tests/fake_dev.h), each with its committed layout.json, and a failure that stops
 * the run so that libFuzzer keeps the input.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdio.h>

#include "fake_dev.h"

struct fuzz_program {
	const char *name;
	struct fake_cfg (*cfg)(void);
	const char *layout_path; /* tests/data/<program>_w64.layout.json */
	char *layout;            /* its text, read once by LLVMFuzzerInitialize */
	size_t layout_len;
};

#define FUZZ_PROGRAMS 3
extern struct fuzz_program fuzz_programs[FUZZ_PROGRAMS];

/* Where matcha-ctl's output goes while fuzzing: /dev/null, opened by LLVMFuzzerInitialize,
 * which both targets take from fuzz_common.c with every program's layout read. */
extern FILE *fuzz_null_out;

/* A fresh fake device of program `p` (its registers as after reset, no layout loaded yet),
 * and its release. */
matcha_dev *fuzz_device_open(const struct fuzz_program *p, struct fake_dev **fd);
void fuzz_device_close(matcha_dev *dev, struct fake_dev *fd);

/* An invariant broken by the input: prints the message and aborts (libFuzzer saves the
 * input as a crash). */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
