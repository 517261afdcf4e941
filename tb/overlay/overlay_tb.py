# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_overlay: the packet path with the overlay program
(docs/overlay.md), the VNET-to-VNET path of SONiC DASH with sessions learned in hardware
and a policer per ENI.

Tables are loaded through the C driver (tb/pipeline/control.py, recorded and replayed on
the DUT; the direct tables through the driver's entries by name). Two oracles check every
frame: the program model (tb/model/program.py) between the packet path model's parse and
deparse, frame by frame in the order sent (PipelineTb.check), and, for the frames a
scenario names, the packet DASH's PTF tests expect, built here with scapy from the
scenario's addresses alone: the new outer Ethernet / IPv4 / UDP / VXLAN (source the VIP,
TTL 64, IP id 1, UDP source port 0 and checksum 0, VXLAN flags 0x08) around the inner
frame, its destination MAC rewritten on the way out.

The scenarios follow DASH's saidashvnet.py (outbound route to a VNET; routing, mapping,
ENI and VIP misses; inbound decap with and without PA validation; ENI admin state; one
prefix in two ENIs) and the VPP pipeline's (a reply passes without the inbound ACL,
unsolicited inbound frames are dropped, a policer per ENI).
"""

import json
from collections import Counter

import cocotb
from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from tb.common import contract, driver as drv
from tb.common.sim import only_on, soak
from tb.model import CHECK_REASONS
from tb.model.meter import GREEN, RED, YELLOW
from tb.model.session import MemSessionModel
from tb.pipeline.control import Update
from tb.pipeline.pipeline_tb import setup
from tb.pipeline.traffic import ip_int, mac_str

# Reasons (docs/overlay.md).
NOT_OVERLAY, VIP_MISS, ENI_MISS, ENI_DOWN = 0x30, 0x32, 0x33, 0x34
INBOUND_ROUTE_MISS, PA_VALIDATION_MISS, ACL_DENIED, ACL_TO_HOST = 0x35, 0x36, 0x37, 0x38
POLICED_RED, POLICED_YELLOW, ROUTE_MISS, MAPPING_MISS = 0x3A, 0x3B, 0x3C, 0x3E
MAPPING_LATE = 0x40
SESSION_LATE = 0x41
ROUTE_LATE = 0x43
SESSION_FULL = 0x39
# meta.aclVerdict
PERMIT, DENY, TO_HOST = 1, 2, 3

# After DASH's PTF topology (sai_dash_utils.py): the appliance's VIP, two hosts in the
# underlay and a VM behind each. A host sends its VM's frames to the appliance in a VNI of
# its own, which the direction table names outbound (101, 102); frames between VNETs carry
# the VNET's VNI (1, 2), which it does not name: inbound.
VIP = "10.1.1.1"
DUT_MAC, ROUTER_MAC = "02:aa:00:00:00:01", "02:bb:00:00:00:02"
UNDERLAY_SMAC, UNDERLAY_DMAC = 0x02AA000000F1, 0x02BB000000F2
TX_PA, RX_PA = "10.10.1.10", "10.10.2.10"
TX_CA, RX_CA = "192.168.0.1", "192.168.1.1"
TX_MAC, RX_MAC = "00:01:00:00:03:14", "00:02:00:00:04:15"
TX_VNI, RX_VNI = 1, 2                   # the VNETs' VNIs
TX_HOST_VNI, RX_HOST_VNI = 101, 102     # the hosts' VNIs toward the appliance
FAKE_MAC = "aa:12:44:69:05:aa"   # the inner destination a VM sends to (DASH: fake_mac)
ENI_TX, ENI_RX = 5, 7            # the ENIs of the two VMs
GROUP_TX, GROUP_RX = 3, 4        # their routing groups
VNET_TX, VNET_RX = 1, 2
MARK_DSCP = 0x0A


def mac_int(mac):
    return int(mac.replace(":", ""), 16)


def vxlan(inner, vni, outer_src, vip=VIP, sport=49152):
    """A frame of the underlay to the appliance: `inner` in VXLAN `vni` from `outer_src`."""
    return bytes(Ether(dst=DUT_MAC, src=ROUTER_MAC) / IP(src=outer_src, dst=vip, ttl=63) /
                 UDP(sport=sport, dport=4789) / VXLAN(vni=vni) / inner)


def vm_frame(src_mac, dst_mac, src, dst, proto="tcp", sport=40000, dport=80, flags="S",
             payload=40):
    l4 = TCP(sport=sport, dport=dport, flags=flags) if proto == "tcp" else \
        UDP(sport=sport, dport=dport)
    return Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst) / l4 / Raw(bytes(payload))


def encapsulated(inner, underlay_dst, vni, inner_dmac=None, routed=False):
    """The frame DASH expects out of the appliance: `inner` (its destination MAC rewritten
    to `inner_dmac` if given) in new outer headers to `underlay_dst`, VNI `vni`. A frame
    the outbound route table routed from one VNET to another has its inner TTL one lower
    and its inner header checksum to match (docs/overlay.md: where Matcha departs from
    DASH)."""
    inner = Ether(bytes(inner))
    if inner_dmac is not None:
        inner.dst = inner_dmac
    if routed:
        inner[IP].ttl -= 1
        del inner[IP].chksum
    outer = (Ether(src=mac_str(UNDERLAY_SMAC), dst=mac_str(UNDERLAY_DMAC)) /
             IP(src=VIP, dst=underlay_dst, ttl=64, id=1, flags=0, tos=0) /
             UDP(sport=0, dport=4789, chksum=0) / VXLAN(vni=vni, flags=0x08) /
             Raw(bytes(inner)))
    return bytes(outer)


def outcome(got):
    """("drop", reason), ("punt", reason) or ("pass", the frame's bytes)."""
    s, emitted, kind, _ = got
    if kind == "drop":
        return "drop", emitted.reason
    if emitted.tuser["punt"]:
        return "punt", emitted.tuser["reason"]
    return "pass", bytes(emitted.data)


async def add_direct(tb, table, index, action, **params):
    """An entry of a direct table, its action's parameters by name."""
    t = tb.model[table]
    assert await tb.add(table, index, action=action, data=t.action(action).data(**params))


async def route_vnet(tb, group, net, length, vnet):
    """A route of routing group `group`: `net`/`length` (of the inner destination) to VNET
    `vnet`; True once added."""
    route = tb.model["route"]
    return await tb.add("route", route.key(routingGroup=group, dst=ip_int(net)),
                        group_bits(tb) + length, action="route_vnet",
                        data=route.data("route_vnet", dst_vnet=vnet))


async def map_ca(tb, vnet, ca, pa, mac):
    """The CA-to-PA mapping of `ca` in VNET `vnet`: underlay `pa`, inner destination MAC."""
    mapping = tb.model["mapping"]
    assert await tb.add("mapping", mapping.key(dstVnet=vnet, dst=ip_int(ca)),
                        action="set_mapping", data=mapping.data(
                            "set_mapping", underlay_ip=ip_int(pa), overlay_dmac=mac))


async def overlay_setup(dut, name):
    """The DUT (PipelineTb) with dash_tables' tables."""
    tb = await setup(dut, name)
    await dash_tables(tb)
    return tb


async def dash_tables(tb):
    """Loads through `tb` (PipelineTb, or tb/corundum's CorundumTb: what it needs is `add`,
    `set_default`, `model`, `lay` and the driver `ctl`) DASH's outbound VNET configuration
    for the VM behind TX_PA (ENI_TX,
    routing group GROUP_TX: 192.168.1.0/24 to VNET_RX, whose VNI is RX_VNI; RX_CA mapped
    to RX_PA with RX_MAC) and its inbound one for the VM behind RX_PA (ENI_RX, frames in
    VNI TX_VNI from 10.10.1.0/24, PA validated against VNET_TX); ACLs: TX may open TCP to
    port 80 and UDP to port 53 of 192.168.1.0/24; RX accepts TCP to port 80 from
    192.168.0.0/24; everything else is denied. The verdict table lets a session's frames
    pass whatever the ACL says. No policer is set: every frame is green."""
    tb.ctl.dev.layout_load_text(json.dumps(tb.lay.raw), "layout-overlay.json")
    m = tb.model
    await add_direct(tb, "frame_class", 0b11, "overlay")
    assert await tb.add("vip", ip_int(VIP), action="accept")
    for vni in (TX_HOST_VNI, RX_HOST_VNI):
        assert await tb.add("direction", vni, action="outbound")
    for eni, mac, group, pa, vni in ((ENI_TX, TX_MAC, GROUP_TX, TX_PA, TX_HOST_VNI),
                                     (ENI_RX, RX_MAC, GROUP_RX, RX_PA, RX_HOST_VNI)):
        assert await tb.add("eni_out", mac_int(mac), action="set_eni",
                            data=m["eni_out"].data("set_eni", eni=eni))
        assert await tb.add("eni_in", mac_int(mac), action="set_eni",
                            data=m["eni_in"].data("set_eni", eni=eni))
        await add_direct(tb, "eni", eni, "set_eni_attrs", routing_group=group,
                         vm_underlay_ip=ip_int(pa), vm_vni=vni, yellow_drop=0)
    assert await route_vnet(tb, GROUP_TX, "192.168.1.0", 24, VNET_RX)
    await map_ca(tb, VNET_RX, RX_CA, RX_PA, mac_int(RX_MAC))
    await add_direct(tb, "vnet", VNET_RX, "set_vni", vni=RX_VNI)
    routing = m["inbound_routing"]
    assert await tb.add("inbound_routing",
                        routing.key(eni=ENI_RX, vni=TX_VNI, src=ip_int("10.10.1.0")),
                        routing.key(eni=0x3FF, vni=0xFFFFFF, src=0xFFFFFF00), 10,
                        action="decap_pa_validate",
                        data=routing.data("decap_pa_validate", src_vnet=VNET_TX))
    assert await tb.add("pa_validation", m["pa_validation"].key(srcVnet=VNET_TX,
                                                                src=ip_int(TX_PA)),
                        action="permit")
    await acl_rule(tb, 1, ENI_TX, "192.168.0.0", "192.168.1.0", 6, 80, "permit", 10)
    await acl_rule(tb, 1, ENI_TX, "192.168.0.0", "192.168.1.0", 17, 53, "permit", 10)
    await acl_rule(tb, 0, ENI_RX, "192.168.0.0", "192.168.1.0", 6, 80, "permit", 10)
    verdict = m["verdict"]
    for acl in range(4):
        await add_direct(tb, "verdict", verdict.key(sessionHit=1, aclVerdict=acl), "admit")
    await add_direct(tb, "verdict", verdict.key(sessionHit=0, aclVerdict=PERMIT), "admit")
    await add_direct(tb, "verdict", verdict.key(sessionHit=0, aclVerdict=TO_HOST), "to_host")
    colour = m["colour"]
    for yellow_drop in (0, 1):
        await add_direct(tb, "colour", colour.key(color=RED, yellowDrop=yellow_drop),
                         "drop_red")
    await add_direct(tb, "colour", colour.key(color=YELLOW, yellowDrop=0), "mark",
                     dscp=MARK_DSCP)
    await add_direct(tb, "colour", colour.key(color=YELLOW, yellowDrop=1), "drop_yellow")
    encap = m["encap"]
    await tb.set_default("encap", "vxlan_encap", encap.data(
        "vxlan_encap", underlay_smac=UNDERLAY_SMAC, underlay_dmac=UNDERLAY_DMAC))


async def acl_rule(tb, outbound, eni, src24, dst24, proto, dport, action, priority):
    """A rule of an ENI's ACL: a /24 source and destination, a protocol and a destination
    port; every other field (the source port) any. The ports are range fields: lo in the
    value, hi in the mask (the source port 0..65535, the destination port dport..dport)."""
    acl = tb.model["acl"]
    value = acl.key(outbound=outbound, eni=eni, src=ip_int(src24), dst=ip_int(dst24),
                    protocol=proto, dstPort=dport)
    mask = acl.key(outbound=1, eni=0x3FF, src=0xFFFFFF00, dst=0xFFFFFF00, protocol=0xFF,
                   srcPort=0xFFFF, dstPort=dport)
    assert await tb.add("acl", value, mask, priority, action=action)


def group_bits(tb):
    """The width of a routing group, the route key's first field."""
    return tb.model["route"].key_parts[0][1]


def outbound(inner_dst=RX_CA, src_mac=TX_MAC, vip=VIP, **kw):
    """A TX VM's frame to `inner_dst`, in the VXLAN of its host."""
    return vxlan(vm_frame(src_mac, FAKE_MAC, TX_CA, inner_dst, **kw), TX_HOST_VNI, TX_PA, vip)


@cocotb.test()
async def test_outbound_route_vnet_encapsulated(dut):
    """DASH Vnet2VnetOutboundRouteVnetSinglePortTest: a TX VM's TCP SYN to RX_CA leaves
    decapsulated and encapsulated again to RX_PA in VNI 2, its inner destination MAC the
    RX VM's, byte for byte what DASH expects; a wrong VIP, a destination no route covers,
    an unknown source MAC and a routed destination with no mapping are dropped, each with
    its reason; with the VIP table's default set to `to_host`, a frame to a wrong VIP goes
    to the host unchanged."""
    tb = await overlay_setup(dut, "outbound_route_vnet")
    # The ACL admits the destination no route covers, so that the route decides.
    await acl_rule(tb, 1, ENI_TX, "192.168.0.0", "192.168.200.0", 6, 80, "permit", 10)
    inner = vm_frame(TX_MAC, FAKE_MAC, TX_CA, RX_CA)
    await tb.send("forward", vxlan(inner, TX_HOST_VNI, TX_PA))
    await tb.send("wrong vip", outbound(vip="10.10.10.10"))
    await tb.send("route miss", outbound(inner_dst="192.168.200.200"))
    await tb.send("eni miss", outbound(src_mac="00:aa:00:aa:00:aa"))
    await tb.send("mapping miss", outbound(inner_dst="192.168.1.200"))
    got = {g[0].name: outcome(g) for g in await tb.check()}
    assert got["forward"] == ("pass", encapsulated(inner, RX_PA, RX_VNI, RX_MAC, routed=True)), \
        Ether(got["forward"][1]).show(dump=True)
    assert got["wrong vip"] == ("drop", VIP_MISS)
    assert got["route miss"] == ("drop", ROUTE_MISS)
    assert got["eni miss"] == ("drop", ENI_MISS)
    assert got["mapping miss"] == ("drop", MAPPING_MISS)
    await tb.check_counters()
    # Configured so, frames to unknown VIPs go to the host, as they came.
    await tb.set_default("vip", "to_host")
    wrong_vip = outbound(vip="10.10.10.10")
    await tb.send("wrong vip to host", wrong_vip)
    (g,) = await tb.check()
    assert outcome(g) == ("punt", VIP_MISS) and bytes(g[1].data) == wrong_vip


@cocotb.test()
async def test_inbound_decap_pa_validation(dut):
    """DASH Vnet2VnetInboundDecapPaValidateSinglePortTest: a TX VM's frame arriving from
    TX_PA in VNI 1 for the RX VM is decapsulated and sent on to the RX VM's host (RX_PA,
    VNI 2), the inner frame unchanged; a VNI no route has, an inner destination no ENI
    has, an outer source no route covers, a wrong VIP and a routed outer source that is no
    known PA of the VNET are dropped with their reasons. Then the route is replaced by a
    plain decap: the unknown PA passes too."""
    tb = await overlay_setup(dut, "inbound_decap_pa_validation")
    inner = vm_frame(TX_MAC, RX_MAC, TX_CA, RX_CA)
    await tb.send("forward", vxlan(inner, TX_VNI, TX_PA))
    await tb.send("vni 1000", vxlan(inner, 1000, TX_PA))
    await tb.send("eni miss", vxlan(vm_frame(TX_MAC, "9e:ba:ce:98:d9:e2", TX_CA, RX_CA),
                                    TX_VNI, TX_PA))
    await tb.send("route miss", vxlan(inner, TX_VNI, "10.10.5.1"))
    await tb.send("wrong vip", vxlan(inner, TX_VNI, TX_PA, vip="10.10.10.10"))
    unknown_pa = vxlan(vm_frame(TX_MAC, RX_MAC, TX_CA, RX_CA, sport=40002), TX_VNI,
                       "10.10.1.25")
    await tb.send("pa miss", unknown_pa)
    got = {g[0].name: outcome(g) for g in await tb.check()}
    assert got["forward"] == ("pass", encapsulated(inner, RX_PA, RX_HOST_VNI)), got["forward"]
    assert got["vni 1000"] == ("drop", INBOUND_ROUTE_MISS)
    assert got["eni miss"] == ("drop", ENI_MISS)
    assert got["route miss"] == ("drop", INBOUND_ROUTE_MISS)
    assert got["wrong vip"] == ("drop", VIP_MISS)
    assert got["pa miss"] == ("drop", PA_VALIDATION_MISS)
    # A route of higher priority for that one source decapsulates without validation.
    routing = tb.model["inbound_routing"]
    assert await tb.add("inbound_routing",
                        routing.key(eni=ENI_RX, vni=TX_VNI, src=ip_int("10.10.1.25")),
                        routing.key(eni=0x3FF, vni=0xFFFFFF, src=0xFFFFFFFF), 20,
                        action="decap", live=True)   # it may move the counted route
    await tb.send("pa not validated", unknown_pa)
    (g,) = await tb.check()
    assert outcome(g) == ("pass", encapsulated(Ether(unknown_pa)[VXLAN].payload, RX_PA,
                                               RX_HOST_VNI))
    await tb.check_counters()


@cocotb.test()
async def test_reply_passes_without_inbound_acl(dut):
    """The VPP pipeline's case: the RX VM's inbound ACL admits nothing from 192.168.1.0/24,
    yet the reply to a flow the TX VM opened (its SYN permitted by the outbound ACL, the
    session learned in the data path) passes; a frame of no session from the same host is
    dropped by the ACL (unsolicited inbound), and the outbound ACL's denial of a port it
    does not permit holds."""
    tb = await overlay_setup(dut, "reply_passes")
    syn = vm_frame(TX_MAC, FAKE_MAC, TX_CA, RX_CA, sport=40001, dport=80, flags="S")
    await tb.send("syn out", vxlan(syn, TX_HOST_VNI, TX_PA))
    got = {g[0].name: outcome(g) for g in await tb.check()}
    assert got["syn out"][0] == "pass", got
    # The reply comes back from RX_PA in VNI 2 to the TX VM (inner destination TX_MAC):
    # inbound for ENI_TX, which needs an inbound route for (ENI_TX, VNI 2, RX_PA).
    routing = tb.model["inbound_routing"]
    assert await tb.add("inbound_routing",
                        routing.key(eni=ENI_TX, vni=RX_VNI, src=ip_int(RX_PA)),
                        routing.key(eni=0x3FF, vni=0xFFFFFF, src=0xFFFFFFFF), 10,
                        action="decap")
    reply = vm_frame(RX_MAC, TX_MAC, RX_CA, TX_CA, sport=80, dport=40001, flags="SA")
    unsolicited = vm_frame(RX_MAC, TX_MAC, RX_CA, TX_CA, sport=80, dport=40999, flags="S")
    await tb.send("reply", vxlan(reply, RX_VNI, RX_PA))
    await tb.send("unsolicited", vxlan(unsolicited, RX_VNI, RX_PA))
    await tb.send("denied port", outbound(dport=22))
    got = {g[0].name: outcome(g) for g in await tb.check()}
    assert got["reply"] == ("pass", encapsulated(reply, TX_PA, TX_HOST_VNI)), got["reply"]
    assert got["unsolicited"] == ("drop", ACL_DENIED)
    assert got["denied port"] == ("drop", ACL_DENIED)
    assert tb.model.sessions["sessions"].table.occupancy == 1


@cocotb.test()
async def test_eni_admin_down(dut):
    """DASH Vnet2VnetOutboundEniSetUpDown: the TX VM's frames pass while its ENI is up, are
    dropped with ENI_DOWN once the ENI's entry says admin down, and pass again when it is
    up again."""
    tb = await overlay_setup(dut, "eni_admin_down")
    got = {}

    async def send(name):
        await tb.send(name, outbound(sport=40000 + len(got)))
        got.update({g[0].name: outcome(g) for g in await tb.check()})
    await send("up")
    eni = tb.model["eni"]
    # The ENIs' entries have handles in the order added: ENI_TX's is the first.
    handle = tb.ctl.dev.entry_handles("eni")[0]
    await tb.change(Update("eni down", lambda: tb.ctl.dev.entry_modify("eni", handle,
                                                                        "admin_down"),
                           lambda: eni.modify(ENI_TX, eni.action_id("admin_down"), 0)))
    await send("down")
    attrs = dict(routing_group=GROUP_TX, vm_underlay_ip=ip_int(TX_PA), vm_vni=TX_HOST_VNI,
                 yellow_drop=0)
    await tb.change(Update("eni up", lambda: tb.ctl.dev.entry_modify(
        "eni", handle, "set_eni_attrs", list(attrs.values())),
        lambda: eni.modify(ENI_TX, eni.action_id("set_eni_attrs"),
                           eni.data("set_eni_attrs", **attrs))))
    await send("up again")
    assert got["up"][0] == got["up again"][0] == "pass", got
    assert got["down"] == ("drop", ENI_DOWN)


@cocotb.test()
async def test_same_prefix_in_two_enis(dut):
    """DASH Vnet2VnetOutboundMultipleEniSameIpPrefix: two ENIs, each with a routing group
    of its own holding the same 192.168.1.0/24, to two VNETs with their own VNIs and PAs:
    each VM's frame to 192.168.1.1 goes where its own ENI's route says."""
    tb = await overlay_setup(dut, "same_prefix_two_enis")
    other_vnet, other_vni, other_pa, other_mac = 20, 200, "10.10.20.10", "00:02:00:00:04:99"
    assert await route_vnet(tb, GROUP_RX, "192.168.1.0", 24, other_vnet)
    await map_ca(tb, other_vnet, RX_CA, other_pa, mac_int(other_mac))
    await add_direct(tb, "vnet", other_vnet, "set_vni", vni=other_vni)
    await acl_rule(tb, 1, ENI_RX, "192.168.0.0", "192.168.1.0", 6, 80, "permit", 10)
    from_tx = vm_frame(TX_MAC, FAKE_MAC, TX_CA, RX_CA)
    from_rx = vm_frame(RX_MAC, FAKE_MAC, TX_CA, RX_CA)
    await tb.send("from tx", vxlan(from_tx, TX_HOST_VNI, TX_PA))
    await tb.send("from rx", vxlan(from_rx, RX_HOST_VNI, RX_PA))
    got = {g[0].name: outcome(g) for g in await tb.check()}
    assert got["from tx"] == ("pass", encapsulated(from_tx, RX_PA, RX_VNI, RX_MAC, routed=True))
    assert got["from rx"] == ("pass", encapsulated(from_rx, other_pa, other_vni, other_mac,
                                                   routed=True))


@cocotb.test()
async def test_routed_inner_header_checks(dut):
    """The route table routes the inner frame (docs/pipeline.md, "Forwarding checks";
    RFC 1812): inner TTL 2 leaves encapsulated with TTL 1; inner TTL 1 and 0, and inner
    options, go to the host as they came; a wrong inner header checksum and an inner total
    length past the frame are dropped. The outer header is the tunnel's, terminated here:
    an outer TTL of 1 is no reason to stop the frame. Fates written here from the RFC,
    and the model's (PipelineTb.check) too."""
    tb = await overlay_setup(dut, "routed_inner_header_checks")

    def inner(**ip):
        return Ether(src=TX_MAC, dst=FAKE_MAC) / IP(src=TX_CA, dst=RX_CA, **ip) / \
            TCP(sport=40000, dport=80, flags="S") / Raw(bytes(40))

    def broken_checksum(pkt):
        b = bytearray(bytes(pkt))
        b[14 + 10] ^= 0x01
        b[14 + 11] ^= 0x01
        return Ether(bytes(b))

    sent = {}
    cases = [
        ("inner TTL 2", inner(ttl=2), "routed"),
        ("inner TTL 1", inner(ttl=1), ("punt", CHECK_REASONS["TTL_EXPIRED"])),
        ("inner TTL 0", inner(ttl=0), ("punt", CHECK_REASONS["TTL_EXPIRED"])),
        ("inner options", inner(options=[IPOption_NOP()] * 4),
         ("punt", CHECK_REASONS["IPV4_OPTIONS"])),
        ("inner checksum wrong", broken_checksum(inner()), ("drop", CHECK_REASONS["IPV4_CHECKSUM"])),
        ("inner total length past the frame", inner(len=len(inner()[IP]) + 1),
         ("drop", CHECK_REASONS["IP_LENGTH"])),
    ]
    for name, pkt, fate in cases:
        sent[name] = (pkt, fate, vxlan(pkt, TX_HOST_VNI, TX_PA))
    outer = Ether(vxlan(inner(), TX_HOST_VNI, TX_PA))
    outer[IP].ttl = 1
    del outer[IP].chksum
    sent["outer TTL 1"] = (inner(), "routed", bytes(outer))
    for name, (_, _, frame) in sent.items():
        await tb.send(name, frame)
    results = {g[0].name: g for g in await tb.check()}
    for name, (pkt, fate, frame) in sent.items():
        got = outcome(results[name])
        if fate == "routed":
            assert got == ("pass", encapsulated(pkt, RX_PA, RX_VNI, RX_MAC, routed=True)), name
        else:
            assert got == fate, name
            if fate[0] == "punt":
                assert bytes(results[name][1].data) == frame, f"{name}: not as it came"


@cocotb.test()
async def test_policer_per_eni(dut):
    """The VPP pipeline's per-source policer: the TX ENI's meter (two-rate, no refill,
    CBS 600 and PBS 1500 bytes, yellow marked) passes its first frames green, marks the
    next ones yellow (outer DSCP) and drops the rest red; the RX ENI, policed by a meter of
    its own that is not set, is never coloured, whatever the TX ENI's meter says."""
    tb = await overlay_setup(dut, "policer_per_eni")
    tb.ctl.dev.set_clock_hz(250_000_000)
    for eni in (ENI_TX, ENI_RX):
        await add_direct(tb, "policer", eni, "police", meter=eni)
    await tb.change(tb.ctl.meter_set("policers", ENI_TX, flags=drv.METER_TWO_RATE, cir=0,
                                     cburst=600, pir=0, pburst=1500))
    await acl_rule(tb, 1, ENI_RX, "192.168.0.0", "192.168.1.0", 6, 80, "permit", 10)
    assert await route_vnet(tb, GROUP_RX, "192.168.1.0", 24, VNET_RX)
    for i in range(8):
        await tb.send(f"tx {i}", outbound(payload=200))
        await tb.send(f"rx {i}", vxlan(vm_frame(RX_MAC, FAKE_MAC, TX_CA, RX_CA, payload=200),
                                       RX_HOST_VNI, RX_PA))
    colours = {"tx": [], "rx": []}
    for g in await tb.check():
        kind, value = outcome(g)
        if kind == "drop":
            assert value == POLICED_RED, g[0].name
            colour = RED
        else:
            assert kind == "pass", g[0].name
            colour = YELLOW if Ether(value)[IP].tos >> 2 == MARK_DSCP else GREEN
        colours[g[0].name.split()[0]].append(colour)
    assert colours["rx"] == [GREEN] * 8, colours
    assert colours["tx"][0] == GREEN and set(colours["tx"]) == {GREEN, YELLOW, RED}, colours



@only_on("matcha_overlay_mem")
@cocotb.test()
async def test_mapping_late_punts(dut):
    """The mapping table in memory, its memory slower than the table's latency (docs/tables.md,
    "Lookup path and the fixed latency"): every outbound frame the route table sends to the
    mapping is punted with MAPPING_LATE as it came, while frames that never reach the
    mapping (to a wrong VIP) are dropped as before; MEMX_WIN_LATE counts the late lookups
    and HITS and MISSES none of them. With the memory fast again, the same frames are
    encapsulated: a late lookup leaves nothing behind."""
    tb = await overlay_setup(dut, "mapping_late")
    mapping = tb.model["mapping"]
    await late_then_in_time(tb, "mapping", mapping, mapping.latency, contract.MEMX_WIN_LATE, MAPPING_LATE, 41000)
    await tb.check_counters()


@only_on("matcha_overlay_mem")
@cocotb.test()
async def test_session_late_punts(dut):
    """The sessions in memory, their memory slower than the table's latency (docs/sessions.md,
    "A packet's path"): every outbound frame that reaches the session stage is punted with
    SESSION_LATE as it came and learns nothing, while frames that never reach it (to a
    wrong VIP) are dropped as before; MEMS_WIN_LATE counts them. With the memory fast
    again, the same flows learn their sessions and are encapsulated."""
    tb = await overlay_setup(dut, "session_late")
    stage = tb.model.sessions["sessions"]
    await late_then_in_time(tb, "sessions", stage, int(stage.desc["latency"]), contract.MEMS_WIN_LATE, SESSION_LATE,
                            42000)
    assert stage.table.learned == 6
    await tb.check_counters()


@only_on("matcha_overlay_mem")
@cocotb.test()
async def test_route_late_punts(dut):
    """The route table's two lowest levels in memory, their memory slower than a level's
    time (docs/tables.md, "LPM levels in memory"): every outbound frame the route table
    looks up is punted with ROUTE_LATE as it came, while frames that never reach it (to a
    wrong VIP) are dropped as before; LPM_WIN_LATE counts the late lookups and HITS and
    MISSES none of them. With the memory fast again, the same frames are routed, mapped
    and encapsulated."""
    tb = await overlay_setup(dut, "route_late")
    route = tb.model["route"]
    await late_then_in_time(tb, "route", route, route.latency, contract.LPM_WIN_LATE, ROUTE_LATE, 43000)
    await tb.check_counters()


async def late_then_in_time(tb, name, unit, latency, late_register, reason, sport):
    """Six outbound frames (source ports from `sport` on) while the memory of table `name`
    answers 40 clocks past its `latency`, and one to a wrong VIP: the six are punted with
    `reason` as they came (`unit`, the model's table or session stage, is told they are
    late), the other is dropped, and the window's `late_register` counts six. Then the
    memory is fast again and, once its slow answers are all back, the same six pass."""
    memories = tb.memories[name]
    base = (unit.index + 1) * contract.INFO_WINDOW_BYTES
    late_before = await tb.read64(base + late_register)
    for memory in memories:
        memory.latency = latency + 40
    unit.late = True
    for i in range(6):
        await tb.send(f"late {i}", outbound(sport=sport + i))
    await tb.send("wrong VIP", outbound(vip="10.9.9.9"))
    got = [outcome(g) for g in await tb.check(timeout=4000)]
    assert got == [("punt", reason)] * 6 + [("drop", VIP_MISS)], got
    assert await tb.read64(base + late_register) - late_before == 6
    for memory in memories:
        memory.latency = 100
    unit.late = False
    await cocotb.triggers.ClockCycles(tb.dut.clk, latency + 100)
    for i in range(6):
        await tb.send(f"in time {i}", outbound(sport=sport + i))
    got = [outcome(g) for g in await tb.check()]
    assert [k for k, _ in got] == ["pass"] * 6, got


async def random_flows(dut, name, frames):
    """Random tables and traffic for six ENIs (the two of overlay_setup and four more with
    random MACs, routing groups, routes and mappings, ACLs permitting random TCP and UDP
    ports): new outbound flows, replies to flows opened earlier, unsolicited inbound
    frames, frames of unknown VMs, to wrong VIPs and to destinations no route or mapping
    covers, under random gaps on both sides. Every frame's output is the model's, in
    order; the counters agree; the traffic reaches every outcome."""
    tb = await overlay_setup(dut, name)
    rng = tb.rng
    m = tb.model
    routing = m["inbound_routing"]
    enis = [(ENI_TX, TX_MAC, TX_PA, TX_HOST_VNI), (ENI_RX, RX_MAC, RX_PA, RX_HOST_VNI)]
    cas = {VNET_RX: [RX_CA]}
    for k in range(4):
        eni, group = 20 + k, 10 + k
        mac = f"02:00:00:00:{k:02x}:{rng.randrange(256):02x}"
        pa, host_vni = f"10.10.{30 + k}.10", 110 + k
        assert await tb.add("direction", host_vni, action="outbound")
        for table in ("eni_out", "eni_in"):
            assert await tb.add(table, mac_int(mac), action="set_eni",
                                data=m[table].data("set_eni", eni=eni))
        await add_direct(tb, "eni", eni, "set_eni_attrs", routing_group=group,
                         vm_underlay_ip=ip_int(pa), vm_vni=host_vni,
                         yellow_drop=rng.randrange(2))
        enis.append((eni, mac, pa, host_vni))
    vnets = {VNET_RX: RX_VNI}
    for v in range(3):
        vnet, vni = 30 + v, 300 + v
        vnets[vnet] = vni
        await add_direct(tb, "vnet", vnet, "set_vni", vni=vni)
        cas[vnet] = [f"172.{16 + v}.{rng.randrange(4)}.{rng.randrange(1, 255)}" for _ in range(6)]
        for ca in set(cas[vnet]):
            await map_ca(tb, vnet, ca, f"10.20.{v}.{rng.randrange(1, 255)}",
                         rng.getrandbits(48) & ~(1 << 40))
    for eni, mac, pa, host_vni in enis[2:]:
        group = 10 + enis.index((eni, mac, pa, host_vni)) - 2
        for vnet in rng.sample(sorted(cas), 3):
            net = ".".join(cas[vnet][0].split(".")[:2]) + ".0.0"
            assert await route_vnet(tb, group, net, 16, vnet)
        for proto in (6, 17):
            for port in rng.sample([53, 80, 443, 8080], 3):
                await acl_port_rule(tb, 1, eni, proto, port, "permit")
    # Replies come back from RX_PA in any VNI to every ENI.
    for eni, *_ in enis:
        assert await tb.add("inbound_routing", routing.key(eni=eni, src=ip_int(RX_PA)),
                            routing.key(eni=0x3FF, src=0xFFFFFFFF), 1, action="decap")
    ports = [53, 80, 443, 22, 8080]
    flows = []
    for i in range(frames):
        kind = rng.choices(["new", "reply", "unsolicited", "unknown", "vip"],
                           weights=[6, 4, 2, 1, 1])[0]
        eni, mac, pa, host_vni = rng.choice(enis)
        if kind == "reply" and not flows:
            kind = "new"
        if kind == "reply":
            f = rng.choice(flows)
            eni, mac, pa, host_vni, src, dst, proto, sport, dport = f
            vnet = rng.choice(sorted(vnets))
            frame = vxlan(vm_frame(RX_MAC, mac, dst, src, "tcp" if proto == 6 else "udp",
                                   dport, sport, flags="SA"), vnets[vnet], RX_PA)
        elif kind == "unsolicited":
            frame = vxlan(vm_frame(RX_MAC, mac, RX_CA, TX_CA, rng.choice(["tcp", "udp"]),
                                   rng.choice(ports), rng.randrange(1024, 65536)),
                          RX_VNI, RX_PA)
        else:
            vnet = rng.choice(sorted(cas))
            dst = rng.choice(cas[vnet] + ["192.168.200.1", "172.31.0.1"])
            src = f"192.168.0.{rng.randrange(1, 255)}"
            proto = rng.choice([6, 17])
            sport, dport = rng.randrange(1024, 65536), rng.choice(ports)
            src_mac = mac if kind != "unknown" else "02:ff:00:00:00:01"
            frame = vxlan(vm_frame(src_mac, FAKE_MAC, src, dst, "tcp" if proto == 6 else "udp",
                                   sport, dport, payload=rng.randrange(0, 300)),
                          host_vni, pa, vip=VIP if kind != "vip" else "10.9.9.9")
            if kind == "new":
                flows.append((eni, mac, pa, host_vni, src, dst, proto, sport, dport))
        await tb.send(f"{i} {kind}", frame)
    tb.random_gaps()
    results = Counter()
    for g in await tb.check():
        kind, value = outcome(g)
        results[g[0].name.split()[1], kind if kind == "pass" else f"{kind} {value:#x}"] += 1
    await tb.check_counters()
    dut._log.info("outcomes: %s", sorted(results.items()))
    assert results["new", "pass"] and results["reply", "pass"], results
    assert results["unsolicited", f"drop {ACL_DENIED:#x}"] and results["vip", f"drop {VIP_MISS:#x}"]


async def acl_port_rule(tb, outbound, eni, proto, dport, action):
    """A rule of an ENI's ACL on the protocol and destination port alone (range fields:
    the source port 0..65535, the destination port dport..dport)."""
    acl = tb.model["acl"]
    value = acl.key(outbound=outbound, eni=eni, protocol=proto, dstPort=dport)
    mask = acl.key(outbound=1, eni=0x3FF, protocol=0xFF, srcPort=0xFFFF, dstPort=dport)
    assert await tb.add("acl", value, mask, 5, action=action)


@cocotb.test()
async def test_random_flows(dut):
    await random_flows(dut, "random_flows", frames=250)


@soak
@cocotb.test()
async def test_random_flows_soak(dut):
    await random_flows(dut, "random_flows_soak", frames=6000)


@cocotb.test()
async def test_syn_flood_keeps_established_sessions(dut):
    """The VPP pipeline's SYN flood: ten flows of the TX VM are established (SYN out, SYN-ACK
    in, ACK out); then a flood of SYNs on new 5-tuples from the same VM, each permitted by
    the ACL, fills the session table (an eighth more SYNs than it has entries; half as many
    as it has in memory, where a key has one bucket) until SYNs find no free way
    and are punted with SESSION_FULL; the established flows' frames, in both directions,
    still pass: a full table refuses new sessions and evicts none. Every frame's output is
    the model's."""
    tb = await overlay_setup(dut, "syn_flood")
    routing = tb.model["inbound_routing"]
    assert await tb.add("inbound_routing",
                        routing.key(eni=ENI_TX, vni=RX_VNI, src=ip_int(RX_PA)),
                        routing.key(eni=0x3FF, vni=0xFFFFFF, src=0xFFFFFFFF), 10,
                        action="decap")
    established = [40000 + i for i in range(10)]
    for flags_out, flags_in in (("S", None), (None, "SA"), ("A", None)):
        for sport in established:
            if flags_out:
                await tb.send(f"{sport} {flags_out}", outbound(sport=sport, flags=flags_out))
            else:
                await tb.send(f"{sport} {flags_in}", vxlan(vm_frame(
                    RX_MAC, TX_MAC, RX_CA, TX_CA, sport=80, dport=sport, flags=flags_in),
                    RX_VNI, RX_PA))
    assert all(o[0] == "pass" for o in (outcome(g) for g in await tb.check()))
    rng = tb.rng
    table = tb.model.sessions["sessions"].table
    # A table in memory refuses a key once the key's one bucket is full: half its size in
    # SYNs fills a fifth of its buckets (docs/sessions.md, "Sessions in memory").
    flood = table.size // 2 if isinstance(table, MemSessionModel) else table.size * 9 // 8
    for i in range(flood):
        src = f"192.168.0.{rng.randrange(1, 255)}"
        frame = vxlan(vm_frame(TX_MAC, FAKE_MAC, src, RX_CA, sport=rng.randrange(1024, 65536),
                               flags="S", payload=0), TX_HOST_VNI, TX_PA)
        await tb.send(f"flood {i}", frame)
    flood_out = [outcome(g) for g in await tb.check(timeout=40 * flood)]
    full = sum(1 for o in flood_out if o == ("punt", SESSION_FULL))
    assert full > 0, "the flood never filled the session table"
    for sport in established:
        await tb.send(f"{sport} data out", outbound(sport=sport, flags="A"))
        await tb.send(f"{sport} data in", vxlan(vm_frame(
            RX_MAC, TX_MAC, RX_CA, TX_CA, sport=80, dport=sport, flags="A"), RX_VNI, RX_PA))
    after = [outcome(g) for g in await tb.check()]
    assert all(o[0] == "pass" for o in after), after
    dut._log.info("flood: %d SYNs, %d punted for a full table, %d sessions", flood, full,
                  table.occupancy)
