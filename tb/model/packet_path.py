# SPDX-License-Identifier: Apache-2.0
"""Reference model of the Matcha packet path: parser, PHV, deparser.

Implements docs/packet-path.md directly, with header formats from headers.py. The PHV is
a dict from field name (``hdr.<inst>.<field>``, ``push.<hdr>.<field>``, ``meta.<field>``)
to int; fields of headers that are not valid are absent (the hardware leaves them
unspecified).
"""

from .headers import (
    BAD_FRAME, DROP_CODES, EMPTY, HEADER_TYPES, INSTANCES, INSTANCE_TYPE,
    IP_VERSION, IPV4_IHL, MAX_FRAME, NO_ERROR, OUTER_INSTANCES, OVERSIZE, PORT_WIDTH,
    PUSH_HEADERS, RUNT, RUNT_BYTES, TCP_OFFSET, TOO_DEEP, TRUNCATED, VXLAN_PORT, WRITABLE,
    ETHERTYPE_IPV4, IPPROTO_UDP, header_size, next_instance,
)

# ---------------------------------------------------------------------------------------
# Bit-level helpers (network order: bit 0 is the MSB of the first byte).


def get_bits(data, bit_offset, width):
    """Field of `width` bits starting `bit_offset` bits into `data` (MSB first)."""
    first = bit_offset // 8
    last = (bit_offset + width - 1) // 8
    chunk = int.from_bytes(data[first:last + 1], "big")
    shift = (last + 1) * 8 - (bit_offset + width)
    return (chunk >> shift) & ((1 << width) - 1)


def set_bits(buf, bit_offset, width, value):
    """Write `value` into `width` bits of bytearray `buf` starting at `bit_offset`."""
    if value < 0 or value >> width:
        raise ValueError(f"value {value:#x} does not fit in {width} bits")
    first = bit_offset // 8
    last = (bit_offset + width - 1) // 8
    nbytes = last + 1 - first
    chunk = int.from_bytes(buf[first:last + 1], "big")
    shift = (last + 1) * 8 - (bit_offset + width)
    mask = ((1 << width) - 1) << shift
    chunk = (chunk & ~mask) | (value << shift)
    buf[first:last + 1] = chunk.to_bytes(nbytes, "big")


def extract(htype, data):
    """Fields of a header of type `htype` from `data` (at least the header's size)."""
    return {name: get_bits(data, off, width) for name, off, width in HEADER_TYPES[htype][1]}


def emit(htype, fields):
    """Bytes of a header of type `htype` from `fields` (missing fields and gaps are 0)."""
    size = header_size(htype)
    buf = bytearray(size)
    for name, off, width in HEADER_TYPES[htype][1]:
        set_bits(buf, off, width, fields.get(name, 0))
    return bytes(buf)


# ---------------------------------------------------------------------------------------
# Internet checksum (RFC 1071) and its incremental update (RFC 1624).


def ones_add(a, b):
    """16-bit one's complement addition with end-around carry."""
    s = a + b
    return (s & 0xFFFF) + (s >> 16)


def ones_sum(data):
    """One's complement sum of `data` as 16-bit big-endian words (odd length padded)."""
    if len(data) % 2:
        data = bytes(data) + b"\x00"
    s = 0
    for i in range(0, len(data), 2):
        s = ones_add(s, (data[i] << 8) | data[i + 1])
    return s


def internet_checksum(data):
    """RFC 1071 checksum of `data`."""
    return ~ones_sum(data) & 0xFFFF


def checksum_update(hc, old_words, new_words):
    """RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), summed over every changed 16-bit word."""
    s = ~hc & 0xFFFF
    for m, m_new in zip(old_words, new_words):
        s = ones_add(s, ~m & 0xFFFF)
        s = ones_add(s, m_new)
    return ~s & 0xFFFF


# ---------------------------------------------------------------------------------------
# Parser.


def parse_record(window, frame_len, ingress_port=0, bad_frame=False, oversize=False, *,
                 header_bytes, runt_bytes=RUNT_BYTES):
    """Parse one header record as the parser module sees it.

    `window` holds the first bytes of the frame (at least min(frame_len, header_bytes)
    of them); only bytes of headers that lie inside both the frame and the window are
    ever read. `header_bytes` is the configuration's header window (layout.json's
    headerBytes).
    """
    window = bytes(window[:header_bytes])

    def beyond(end):
        """The error of a header ending at byte `end`: past the frame, past the window, or
        none (NO_ERROR)."""
        return TRUNCATED if end > frame_len else TOO_DEEP if end > header_bytes else NO_ERROR

    phv = {}
    header_error = NO_ERROR
    offset = 0
    end_of_last = 0
    inst = "eth"
    while inst is not None:
        htype = INSTANCE_TYPE[inst]
        size = header_size(htype)
        header_error = beyond(offset + size)
        if header_error:
            break
        fields = extract(htype, window[offset:offset + size])
        if htype == "ipv4":
            if fields["version"] != 4:
                header_error = IP_VERSION
                break
            if fields["ihl"] < 5:
                header_error = IPV4_IHL
                break
            size = fields["ihl"] * 4
            header_error = beyond(offset + size)
            if header_error:
                break
        elif htype == "ipv6" and fields["version"] != 6:
            header_error = IP_VERSION
            break
        elif htype == "tcp":
            # The options are skipped, not extracted, but the window must hold them.
            if fields["dataOffset"] < 5:
                header_error = TCP_OFFSET
                break
            size = fields["dataOffset"] * 4
            header_error = beyond(offset + size)
            if header_error:
                break
        phv[f"hdr.{inst}.valid"] = 1
        phv[f"hdr.{inst}.offset"] = offset
        for name, value in fields.items():
            phv[f"hdr.{inst}.{name}"] = value
        if htype == "ipv4":
            for name in WRITABLE["ipv4"]:
                phv[f"hdr.{inst}.{name}Orig"] = fields[name]
            # RFC 1071 over the 20 bytes of the fixed part (options are not summed).
            phv[f"hdr.{inst}.checksumOk"] = int(ones_sum(window[offset:offset + 20]) == 0xFFFF)
        if htype in ("ipv4", "ipv6"):
            # RFC 1812 5.2.2: the datagram holds its header and the frame holds the datagram.
            datagram = fields["totalLen"] if htype == "ipv4" else 40 + fields["payloadLen"]
            phv[f"hdr.{inst}.lengthOk"] = int(size <= datagram <= frame_len - offset)
        offset += size
        end_of_last = offset
        inst = next_instance(inst, fields)

    for inst, _ in INSTANCES:
        phv.setdefault(f"hdr.{inst}.valid", 0)
    for inst, _ in PUSH_HEADERS:
        phv[f"push.{inst}.valid"] = 0

    if bad_frame:
        error = BAD_FRAME
    elif oversize:
        error = OVERSIZE
    elif frame_len < runt_bytes:
        error = RUNT
    else:
        error = header_error

    port = ingress_port & ((1 << PORT_WIDTH) - 1)
    phv["meta.ingressPort"] = port
    phv["meta.egressPort"] = port
    phv["meta.parseError"] = error
    phv["meta.reason"] = error
    phv["meta.drop"] = int(error in DROP_CODES)
    phv["meta.punt"] = int(error != NO_ERROR and error not in DROP_CODES)
    phv["meta.frameLen"] = frame_len & 0xFFFF
    phv["meta.payloadOffset"] = end_of_last
    phv["meta.color"] = 0  # green until a meter says otherwise
    # Set by the stages: the session stage's learn input and its result.
    for name in ("learn", "sessionHit", "sessionReply", "sessionState", "sessionLearned",
                 "sessionFailed"):
        phv[f"meta.{name}"] = 0
    return phv


def header_window(frame, header_bytes):
    """The parser's view of a frame: its first bytes, zero past the frame's end."""
    w = bytes(frame[:header_bytes])
    return w + bytes(header_bytes - len(w))


def parse(frame, ingress_port=0, bad_frame=False, *, header_bytes, runt_bytes=RUNT_BYTES,
          max_frame=MAX_FRAME):
    """PHV the parser produces for `frame` (bytes as received)."""
    return parse_record(header_window(frame, header_bytes), len(frame),
                        ingress_port=ingress_port, bad_frame=bad_frame,
                        oversize=len(frame) > max_frame, header_bytes=header_bytes,
                        runt_bytes=runt_bytes)


def valid_instances(phv):
    return [inst for inst, _ in INSTANCES if phv.get(f"hdr.{inst}.valid")]


# ---------------------------------------------------------------------------------------
# Deparser.


def pop_len(phv):
    """Bytes removed from the front of the frame: offset of the first valid header."""
    for inst, _ in INSTANCES:
        if phv.get(f"hdr.{inst}.valid"):
            return phv[f"hdr.{inst}.offset"]
    return phv.get("meta.payloadOffset", 0)


def _write_back(frame, phv):
    """The frame with the writable fields of every valid header written back."""
    buf = bytearray(frame)
    for inst, htype in INSTANCES:
        if not phv.get(f"hdr.{inst}.valid") or htype not in WRITABLE:
            continue
        base = phv[f"hdr.{inst}.offset"] * 8
        fmt = {name: (off, width) for name, off, width in HEADER_TYPES[htype][1]}
        if htype == "ipv4":
            changed = any(phv[f"hdr.{inst}.{n}"] != phv[f"hdr.{inst}.{n}Orig"]
                          for n in WRITABLE["ipv4"])
            start = phv[f"hdr.{inst}.offset"]
        for name in WRITABLE[htype]:
            off, width = fmt[name]
            set_bits(buf, base + off, width, phv[f"hdr.{inst}.{name}"])
        if htype == "ipv4" and changed:
            # Original words as parsed: same bytes with the ...Orig values.
            orig = bytearray(buf[start:start + 10])
            for name in WRITABLE["ipv4"]:
                off, width = fmt[name]
                set_bits(orig, off, width, phv[f"hdr.{inst}.{name}Orig"])
            old_words = [(orig[0] << 8) | orig[1], (orig[8] << 8) | orig[9]]
            new_words = [(buf[start] << 8) | buf[start + 1],
                         (buf[start + 8] << 8) | buf[start + 9]]
            hc = checksum_update(phv[f"hdr.{inst}.hdrChecksum"], old_words, new_words)
            set_bits(buf, base + 80, 16, hc)
    return buf


def _push_bytes(phv, rest_len):
    """Pushed headers (eth, ipv4, udp, vxlan) for a frame whose remaining part is
    `rest_len` bytes long, with lengths and the IPv4 checksum filled in."""
    headers = []
    for inst, htype in PUSH_HEADERS:
        if phv.get(f"push.{inst}.valid"):
            fields = {name: phv.get(f"push.{inst}.{name}", 0)
                      for name, _, _ in HEADER_TYPES[htype][1]}
            headers.append([inst, htype, fields])
    total = sum(header_size(h[1]) for h in headers) + rest_len
    out = bytearray()
    for inst, htype, fields in headers:
        following = total - len(out)
        if htype == "ipv4":
            fields.update(version=4, ihl=5, totalLen=following, hdrChecksum=0)
            raw = bytearray(emit("ipv4", fields))
            set_bits(raw, 80, 16, internet_checksum(raw))
            out += raw
        elif htype == "udp":
            fields.update(length=following, checksum=0)
            out += emit("udp", fields)
        else:
            out += emit(htype, fields)
    return bytes(out)


def deparse(frame, phv):
    """What the deparser emits for `frame` with `phv`.

    Returns (out_bytes, tuser, drop_reason): out_bytes is None when the frame is dropped
    (drop_reason then holds the reason pulsed on drop_payload, tuser is None); otherwise
    tuser = {"punt", "egressPort", "reason"} and drop_reason is None.
    """
    if phv.get("meta.drop"):
        return None, None, phv.get("meta.reason", 0)
    body = _write_back(frame, phv)[pop_len(phv):]
    out = _push_bytes(phv, len(body)) + bytes(body)
    if not out:
        return None, None, EMPTY
    tuser = {"punt": phv.get("meta.punt", 0), "egressPort": phv.get("meta.egressPort", 0),
             "reason": phv.get("meta.reason", 0)}
    return out, tuser, None


# ---------------------------------------------------------------------------------------
# Pipeline-stage helpers: edit a PHV the way a match-action stage would.


def _mac(value):
    if isinstance(value, str):
        return int(value.replace(":", "").replace("-", ""), 16)
    return value


def _ip4(value):
    if isinstance(value, str):
        a, b, c, d = (int(x) for x in value.split("."))
        return (a << 24) | (b << 16) | (c << 8) | d
    return value


def vxlan_encap(phv, *, eth_dst, eth_src, ip_src, ip_dst, vni, udp_src=49152, ttl=64,
                dscp=0, ecn=0, identification=0, ip_flags=0b010, vxlan_flags=0x08,
                egress_port=None):
    """Copy of `phv` with outer Ethernet/IPv4/UDP/VXLAN (RFC 7348) headers to push.

    Addresses may be ints or strings ("aa:bb:..", "10.0.0.1"). version, ihl, totalLen,
    hdrChecksum, udp length and checksum are left to the deparser.
    """
    out = dict(phv)
    out.update({
        "push.eth.valid": 1, "push.eth.dst": _mac(eth_dst), "push.eth.src": _mac(eth_src),
        "push.eth.etherType": ETHERTYPE_IPV4,
        "push.ipv4.valid": 1, "push.ipv4.dscp": dscp, "push.ipv4.ecn": ecn,
        "push.ipv4.identification": identification, "push.ipv4.flags": ip_flags,
        "push.ipv4.fragOffset": 0, "push.ipv4.ttl": ttl, "push.ipv4.protocol": IPPROTO_UDP,
        "push.ipv4.src": _ip4(ip_src), "push.ipv4.dst": _ip4(ip_dst),
        "push.udp.valid": 1, "push.udp.srcPort": udp_src, "push.udp.dstPort": VXLAN_PORT,
        "push.vxlan.valid": 1, "push.vxlan.flags": vxlan_flags, "push.vxlan.vni": vni,
    })
    if egress_port is not None:
        out["meta.egressPort"] = egress_port
    return out


def vxlan_decap(phv):
    """Copy of `phv` with the outer headers (eth .. vxlan) invalidated, so the deparser
    emits the inner frame from inner_eth on."""
    if not (phv.get("hdr.vxlan.valid") and phv.get("hdr.inner_eth.valid")):
        raise ValueError("vxlan_decap needs a valid vxlan and inner_eth header")
    out = dict(phv)
    for inst in OUTER_INSTANCES:
        out[f"hdr.{inst}.valid"] = 0
    return out


def set_field(phv, name, value):
    """Copy of `phv` with one field changed (e.g. a TTL decrement)."""
    out = dict(phv)
    out[name] = value
    return out
