# SPDX-License-Identifier: Apache-2.0
"""Python reference model of the Matcha packet path (see docs/packet-path.md)."""

from .headers import (  # noqa: F401
    BAD_FRAME, CHECK_REASONS, DROP_CODES, EMPTY, ERROR_NAMES, HEADER_TYPES, INSTANCES,
    INSTANCE_TYPE, IP_VERSION, IPV4_IHL, MAX_FRAME, NO_ERROR, OUTER_INSTANCES, OVERSIZE,
    PARSE_ERRORS, PORT_WIDTH, PUSH_HEADERS, RUNT, RUNT_BYTES, TCP_OFFSET, TOO_DEEP, TRUNCATED,
    WRITABLE, all_field_names, header_size, next_instance,
)
from .packet_path import (  # noqa: F401
    checksum_update, deparse, ones_add, emit, extract, get_bits, header_window, internet_checksum,
    ones_sum, parse, parse_record, pop_len, set_bits, set_field, valid_instances,
    vxlan_decap, vxlan_encap,
)
