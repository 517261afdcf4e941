# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the Matcha testbenches: seeds, PHV layout, frames, simulator runs."""
