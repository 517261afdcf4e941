/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal test harness: CHECK macros, the test list, a seeded generator. */
#ifndef CHECK_H
#define CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "matcha.h"

/* Every test, in run order: X(name) defines test_<name>(void) in one of the test files. */
#define MATCHA_TESTS(X)                                                                    \
	X(strerror_all_codes)                                                              \
	X(discovery)                                                                       \
	X(discovery_bad_magic)                                                             \
	X(discovery_bad_version)                                                           \
	X(discovery_bus_error)                                                             \
	X(discovery_bad_descriptor)                                                        \
	X(discovery_kind_flags)                                                            \
	X(table_errors)                                                                    \
	X(table_counters)                                                                  \
	X(counters_raw_read_zero)                                                          \
	X(counters_unsupported)                                                            \
	X(default_action)                                                                  \
	X(range_to_prefixes_exhaustive)                                                    \
	X(range_to_prefixes_wide)                                                          \
	X(crc64_check_value)                                                               \
	X(hash_vectors)                                                                    \
	X(exact_add_read_delete)                                                           \
	X(exact_argument_errors)                                                           \
	X(exact_fill_until_full)                                                           \
	X(exact_collisions_in_all_ways)                                                    \
	X(exact_collisions_in_way0)                                                        \
	X(exact_make_before_break)                                                         \
	X(exact_make_before_break_counters)                                                \
	X(exact_counters_follow_moves)                                                     \
	X(exact_counters_reset_and_reuse)                                                  \
	X(exact_clear)                                                                     \
	X(lpm_levels_probed)                                                               \
	X(lpm_nested_ipv4)                                                                 \
	X(lpm_default_and_host_routes)                                                     \
	X(lpm_argument_errors)                                                             \
	X(lpm_full_at_size_distinct_boundaries)                                            \
	X(lpm_full_at_size_distinct_boundaries_fanout_3)                                   \
	X(lpm_full_at_size_long_under_short)                                               \
	X(lpm_full_at_size_nested_chain)                                                   \
	X(lpm_counters)                                                                    \
	X(lpm_random_32)                                                                   \
	X(lpm_random_128)                                                                  \
	X(lpm_random_fanout_3_and_10)                                                      \
	X(lpm_make_before_break_32)                                                        \
	X(lpm_make_before_break_128)                                                       \
	X(lpm_load_random_32)                                                              \
	X(lpm_load_random_128)                                                             \
	X(lpm_load_full_fanout_3_and_10)                                                   \
	X(lpm_load_refusals)                                                               \
	X(lpm_bgp_table_loads_at_once)                                                     \
	X(lpm_bgp_table_fills_its_size)                                                    \
	X(lpm_full_table_fills_a_million)                                                  \
	X(lpm_full_ipv6_table)                                                             \
	X(ternary_priority_order)                                                          \
	X(ternary_random_make_before_break)                                                \
	X(ternary_make_before_break_counters)                                              \
	X(ternary_counters_follow_shifts)                                                  \
	X(ternary_port_range)                                                              \
	X(ternary_range_random_make_before_break)                                          \
	X(ternary_range_shared_boundaries)                                                 \
	X(ternary_range_field_full)                                                        \
	X(ternary_range_by_name)                                                           \
	X(ternary_range_adopt)                                                             \
	X(session_key_ipv4)                                                                \
	X(session_discovery)                                                               \
	X(mem_session_discovery)                                                           \
	X(session_read_find_delete)                                                        \
	X(session_delete_is_compare_and_delete)                                            \
	X(session_settings_and_stats)                                                      \
	X(session_flush)                                                                   \
	X(session_adopted)                                                                 \
	X(meter_discovery)                                                                 \
	X(meter_units)                                                                     \
	X(meter_get)                                                                       \
	X(meter_range)                                                                     \
	X(meter_conversion_exact)                                                          \
	X(meter_conversion_extremes)                                                       \
	X(meter_errors)                                                                    \
	X(meter_adopted)                                                                   \
	X(adopt_exact_moved_entries)                                                       \
	X(adopt_lpm_hidden_prefixes)                                                       \
	X(adopt_ternary_priorities_and_ties)                                               \
	X(adopt_refuses_inconsistent_tables)                                               \
	X(adopt_refuses_corrupt_trees_and_rules)                                            \
	X(app_control_set_and_clear_each_bit)                                              \
	X(app_control_keeps_other_bits)                                                    \
	X(app_control_refuses_undefined_bits)                                              \
	X(app_control_not_a_corundum_block)                                                \
	X(app_control_bit_the_block_lacks)                                                 \
	X(app_packet_outs)                                                                 \
	X(open_uri_errors)                                                                 \
	X(open_pci_resource_file)                                                          \
	X(open_app_block_errors)                                                           \
	X(open_short_mapping)                                                              \
	X(open_sim_socket)                                                                 \
	X(open_sim_bus_errors)                                                             \
	X(open_sim_app_control_refused)                                                    \
	X(open_sim_closes_mid_transaction)                                                 \
	X(open_serial_pty)                                                                 \
	X(layout_good)                                                                     \
	X(layout_build_id_mismatch)                                                        \
	X(layout_disagrees_with_hardware)                                                  \
	X(layout_malformed_json)                                                           \
	X(layout_schema_errors)                                                            \
	X(layout_copy_current)                                                             \
	X(layout_policer_meters)                                                           \
	X(layout_meter_disagrees_with_hardware)                                            \
	X(layout_meter_descriptors_covered_once)                                           \
	X(layout_conntrack_sessions)                                                       \
	X(layout_session_disagrees_with_hardware)                                          \
	X(entries_exact)                                                                   \
	X(entries_lpm)                                                                     \
	X(entries_ternary_ranges)                                                          \
	X(entries_without_layout)                                                          \
	X(entries_adopted)                                                                 \
	X(entries_table_handle)                                                            \
	X(entries_bulk_add)                                                                \
	X(direct_add_modify_delete_read)                                                   \
	X(direct_key_errors)                                                               \
	X(direct_adopt)                                                                    \
	X(direct_ctl)                                                                      \
	X(direct_discovery)                                                                \
	X(mem_exact_discovery)                                                             \
	X(mem_exact_first_free_entry_of_bucket)                                            \
	X(mem_exact_full_bucket_refuses_key)                                               \
	X(mem_exact_delete_then_add_reuses_entry)                                          \
	X(mem_exact_modify_keeps_entry)                                                    \
	X(mem_exact_write_touches_entry_bytes_only)                                        \
	X(mem_exact_argument_errors)                                                       \
	X(mem_exact_memory_write_error)                                                    \
	X(mem_exact_random_against_model)                                                  \
	X(mem_exact_fake_window)                                                           \
	X(mem_exact_adopt)                                                                 \
	X(mem_exact_by_name_and_ctl)                                                       \
	X(mem_exact_fake_stash_window)                                                     \
	X(mem_exact_stash_takes_full_buckets_keys)                                         \
	X(mem_exact_stash_full_refuses_key)                                                \
	X(mem_exact_stash_make_before_break)                                               \
	X(mem_exact_stash_modify_delete)                                                   \
	X(mem_exact_stash_key_back_to_bucket)                                              \
	X(mem_exact_stash_adopt)                                                           \
	X(mem_exact_stash_bad_size)                                                        \
	X(mem_exact_stash_not_in_map_1_0)                                                  \
	X(mem_exact_stash_read_indexes)                                                    \
	X(mem_exact_stash_by_name)                                                         \
	X(mem_exact_mappings_at_scale)                                                     \
	X(ctl_completion)                                                                  \
	X(ctl_values)                                                                      \
	X(ctl_matches)                                                                     \
	X(ctl_commands)                                                                    \
	X(ctl_ipv4_mapped_on_ipv4_keys)                                                    \
	X(ctl_command_errors)                                                              \
	X(ctl_meter_commands)                                                              \
	X(ctl_meter_command_errors)                                                        \
	X(ctl_session_commands)                                                            \
	X(ctl_mem_session_commands)                                                        \
	X(ctl_session_command_errors)                                                      \
	X(ctl_app_control)                                                                 \
	X(ctl_batch_checked_by_readback)                                                   \
	X(ctl_batch_loads_an_lpm_table_at_once)                                            \
	X(ctl_batch_stops_at_first_error)                                                  \
	X(ctl_fuzz_lines_and_batches)                                                      \
	X(layout_fuzz)                                                                     \
	X(ctl_program_over_sim_socket)                                                     \
	X(ctl_program_options)                                                             \
	X(ctl_program_meters)                                                              \
	X(ctl_program_sessions)                                                            \
	X(ctl_conntrack_session_by_name)                                                   \
	X(ctl_second_run_adopts_the_first)                                                 \
	X(ctl_refused_table_cleared)                                                       \
	X(ctl_second_program)

#define DECLARE_TEST(name) void test_##name(void);
MATCHA_TESTS(DECLARE_TEST)

/* Records a failure of the running test (the first few are printed). */
void check_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Failures of the running test so far. */
unsigned check_failures(void);

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			check_fail(__FILE__, __LINE__, "%s", #cond);                       \
			return;                                                            \
		}                                                                          \
	} while (0)

#define CHECK_MSG(cond, ...)                                                               \
	do {                                                                               \
		if (!(cond)) {                                                             \
			check_fail(__FILE__, __LINE__, __VA_ARGS__);                       \
			return;                                                            \
		}                                                                          \
	} while (0)

/* expr must return `want`; on a mismatch the device's last error is shown. */
#define CHECK_RC(dev, expr, want)                                                          \
	do {                                                                               \
		int rc_ = (expr);                                                          \
		if (rc_ != (want)) {                                                       \
			check_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d: %s", \
				   #expr, rc_, matcha_strerror(rc_), (int)(want),          \
				   matcha_last_error(dev));                                \
			return;                                                            \
		}                                                                          \
	} while (0)

#define CHECK_OK(dev, expr) CHECK_RC(dev, expr, 0)

/* splitmix64: small, fast, and the same sequence everywhere for one seed. */
struct rng {
	uint64_t state;
};
/* A generator for the running test, from the run's seed and the test's name. */
struct rng rng_for_test(void);
uint64_t rng_next(struct rng *r);
uint32_t rng_below(struct rng *r, uint32_t n);
void rng_bytes(struct rng *r, uint8_t *p, unsigned n);

#endif
