// SPDX-License-Identifier: Apache-2.0
package matcha.board

import matcha.table.ControlBus
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite._
import spinal.lib.com.uart._

/** The control bus over a serial line, in the framing of the simulator's control socket
  * (docs/sim-socket.md): a 12-byte request ('R' or 'W', three zero bytes, address and data
  * little-endian) is run as one AXI4-Lite transaction and answered with 8 bytes (op, AXI
  * response, two zero bytes, data). An unknown op or an unaligned address is answered with
  * response 0xFF, an address beyond the bus's 24 bits with DECERR, without a transaction.
  * A pause of `resyncBytes` character times inside a request discards the partial
  * request, so a client that lost a byte finds the frame boundary again.
  * 8 data bits, no parity, one stop bit; one bit lasts 8 * (clockDivider + 1) clocks. */
class UartAxiLiteBridge(clockDivider: Int, resyncBytes: Int = 64) extends Component {
  setDefinitionName("matcha_uart_axil_bridge")
  val io = new Bundle {
    val uart = master(Uart())
    val bus = master(AxiLite4(ControlBus.axiConfig))
  }
  val uart = new UartCtrl(UartCtrlGenerics())
  uart.io.config.clockDivider := clockDivider
  uart.io.config.frame.dataLength := 7
  uart.io.config.frame.parity := UartParityType.NONE
  uart.io.config.frame.stop := UartStopType.ONE
  uart.io.writeBreak := False
  io.uart <> uart.io.uart

  val request = Vec(Reg(Bits(8 bits)), 12)
  val received = Reg(UInt(4 bits)) init 0
  val op = request(0)
  val address = Cat(request.slice(4, 8)) // little-endian: Cat puts its first part lowest
  val data = Cat(request.slice(8, 12))

  val answerResp = Reg(Bits(8 bits))
  val answerData = Reg(Bits(32 bits))
  val answerIndex = Reg(UInt(3 bits))

  val clocksPerByte = 8 * (clockDivider + 1) * 10
  val quiet = Reg(UInt(log2Up(clocksPerByte * resyncBytes + 1) bits)) init 0

  object State extends SpinalEnum { val Receive, Decode, Read, ReadWait, Write, WriteWait, Answer = newElement() }
  val state = RegInit(State.Receive)
  val awDone, wDone = Reg(Bool())

  uart.io.read.ready := state === State.Receive
  io.bus.ar.valid := state === State.Read
  io.bus.ar.addr := address.asUInt.resized
  io.bus.ar.prot := B"000"
  io.bus.aw.valid := state === State.Write && !awDone
  io.bus.aw.addr := address.asUInt.resized
  io.bus.aw.prot := B"000"
  io.bus.w.valid := state === State.Write && !wDone
  io.bus.w.data := data
  io.bus.w.strb := B"1111"
  io.bus.r.ready := state === State.ReadWait
  io.bus.b.ready := state === State.WriteWait

  val answer = Vec(Seq(op, answerResp, B(0, 8 bits), B(0, 8 bits)) ++ answerData.subdivideIn(8 bits))
  uart.io.write.valid := state === State.Answer
  uart.io.write.payload := answer(answerIndex)

  switch(state) {
    is(State.Receive) {
      when(received =/= 0) { quiet := quiet + 1 }
      when(quiet === clocksPerByte * resyncBytes) {
        received := 0
        quiet := 0
      }
      when(uart.io.read.valid) {
        request(received.resize(4)) := uart.io.read.payload
        received := received + 1
        quiet := 0
        when(received === 11) {
          received := 0
          state := State.Decode
        }
      }
    }
    is(State.Decode) {
      answerData := 0
      answerIndex := 0
      awDone := False
      wDone := False
      val isRead = op === 0x52
      val isWrite = op === 0x57
      when(!(isRead || isWrite) || address(1 downto 0) =/= 0) {
        answerResp := 0xff
        state := State.Answer
      } elsewhen (address(31 downto ControlBus.Info.AddressWidth) =/= 0) {
        answerResp := 3
        state := State.Answer
      } otherwise {
        state := isRead ? State.Read | State.Write
      }
    }
    is(State.Read) {
      when(io.bus.ar.ready) { state := State.ReadWait }
    }
    is(State.ReadWait) {
      when(io.bus.r.valid) {
        answerResp := io.bus.r.resp.resized
        answerData := io.bus.r.data
        state := State.Answer
      }
    }
    is(State.Write) {
      val awNow = awDone || io.bus.aw.ready
      val wNow = wDone || io.bus.w.ready
      awDone := awNow
      wDone := wNow
      when(awNow && wNow) { state := State.WriteWait }
    }
    is(State.WriteWait) {
      when(io.bus.b.valid) {
        answerResp := io.bus.b.resp.resized
        state := State.Answer
      }
    }
    is(State.Answer) {
      when(uart.io.write.ready) {
        answerIndex := answerIndex + 1
        when(answerIndex === 7) { state := State.Receive }
      }
    }
  }
}
