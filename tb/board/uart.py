# SPDX-License-Identifier: Apache-2.0
"""A UART line model (8 data bits, no parity, one stop bit) and the bridge's framing
(docs/sim-socket.md: 12-byte request, 8-byte answer), for matcha_board's control port."""

import struct

from cocotb.triggers import Timer


class Uart:
    """Drives `rxd` (the DUT's receive line) and samples `txd`, `bit_ns` per bit."""

    def __init__(self, rxd, txd, bit_ns):
        self.rxd, self.txd, self.bit_ns = rxd, txd, bit_ns
        self.rxd.value = 1

    async def send(self, data):
        for b in data:
            for level in [0] + [(b >> i) & 1 for i in range(8)] + [1]:
                self.rxd.value = level
                await Timer(self.bit_ns, "ns")

    async def recv(self, n, timeout_bits=200_000):
        out = bytearray()
        for _ in range(n):
            waited = 0
            while int(self.txd.value) == 1:
                await Timer(self.bit_ns // 4, "ns")
                waited += 1
                if waited > 4 * timeout_bits:
                    raise TimeoutError(f"UART: no start bit after {len(out)} of {n} bytes")
            # the middle of the start bit, then the middle of each data bit
            await Timer(self.bit_ns // 2, "ns")
            assert int(self.txd.value) == 0, "UART: start bit did not last"
            b = 0
            for i in range(8):
                await Timer(self.bit_ns, "ns")
                b |= int(self.txd.value) << i
            await Timer(self.bit_ns, "ns")
            assert int(self.txd.value) == 1, f"UART: no stop bit after byte 0x{b:02x}"
            out.append(b)
        return bytes(out)


class BridgeError(Exception):
    def __init__(self, op, addr, resp):
        super().__init__(f"{op} 0x{addr:06x}: response 0x{resp:02x}")
        self.resp = resp


class Bridge:
    """Bus transactions through the UART bridge."""

    def __init__(self, uart):
        self.uart = uart

    async def transact(self, op, addr, data=0):
        await self.uart.send(struct.pack("<B3xII", ord(op), addr, data))
        answer = await self.uart.recv(8)
        a_op, resp, value = struct.unpack("<BB2xI", answer)
        assert a_op == ord(op), f"answer op 0x{a_op:02x} for request {op}"
        return resp, value

    async def read32(self, addr):
        resp, value = await self.transact("R", addr)
        if resp:
            raise BridgeError("R", addr, resp)
        return value

    async def write32(self, addr, value):
        resp, _ = await self.transact("W", addr, value)
        if resp:
            raise BridgeError("W", addr, resp)
