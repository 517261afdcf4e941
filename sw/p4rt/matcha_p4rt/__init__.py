# SPDX-License-Identifier: Apache-2.0
"""matcha-p4rt: a P4Runtime server for Matcha devices (docs/p4runtime.md)."""
