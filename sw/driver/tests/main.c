/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs the unit tests: `matcha_tests [substring]` runs the tests whose name contains the
 * substring. The seed of the randomized tests comes from MATCHA_SEED, else the clock, and
 * is printed first. The last line is "<N> passed, <M> failed".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#define PRINTED_FAILURES 10

struct test {
	const char *name;
	void (*fn)(void);
};

#define TEST_ENTRY(name) { #name, test_##name },
static const struct test tests[] = { MATCHA_TESTS(TEST_ENTRY) };

static uint64_t run_seed;
static const char *running;
static unsigned failures;

void check_fail(const char *file, int line, const char *fmt, ...)
{
	if (failures++ >= PRINTED_FAILURES)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "  %s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

unsigned check_failures(void) { return failures; }

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint32_t rng_below(struct rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

void rng_bytes(struct rng *r, uint8_t *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)rng_next(r);
}

struct rng rng_for_test(void)
{
	/* FNV-1a of the name: each test its own stream, independent of the run order. */
	uint64_t h = 0xCBF29CE484222325ull;
	for (const char *c = running; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001B3ull;
	return (struct rng){ run_seed ^ h };
}

int main(int argc, char **argv)
{
	const char *env = getenv("MATCHA_SEED");
	run_seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	printf("seed: %llu (set MATCHA_SEED to repeat)\n", (unsigned long long)run_seed);

	unsigned passed = 0, failed = 0;
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		running = tests[i].name;
		failures = 0;
		clock_t start = clock();
		tests[i].fn();
		double ms = 1000.0 * (double)(clock() - start) / CLOCKS_PER_SEC;
		if (failures) {
			failed++;
			printf("FAIL %s (%u failed checks)\n", running, failures);
		} else {
			passed++;
			printf("ok   %s (%.0f ms)\n", running, ms);
		}
		fflush(stdout);
	}
#ifdef __SANITIZE_ADDRESS__
	/* A failed check returns early and leaks, so leaks only count when all else passed. */
	if (!failed) {
		bool leaked = __lsan_do_recoverable_leak_check();
		printf("%s leak_check\n", leaked ? "FAIL" : "ok  ");
		failed += leaked;
		passed += !leaked;
	}
#endif
	printf("%u passed, %u failed\n", passed, failed);
	fflush(stdout);
	/* _Exit: no end-of-process leak report after the summary line. */
	_Exit(failed ? 1 : 0);
}
