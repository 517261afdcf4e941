// SPDX-License-Identifier: Apache-2.0
// A memory behind one AXI4 master port of the pipeline (a memory-backed table's,
// m_axi_<table>_*), as matcha-sim answers it: DRAM or HBM reduced to a latency and a
// bandwidth. Every read beat is answered `latency` clocks after its address was taken, in
// the order the addresses came, at most one beat every `interval` clocks, with the
// contents as they are then. With `jitter`, a read waits up to that many clocks more
// (drawn from `seed`), after the reads of its id before it: reads of one id keep their
// order, as AXI asks, and the earliest due of any id is answered first, so a read of one id
// overtakes older reads of another, as a DRAM controller's reordering does (a burst's
// beats stay together). A write lands
// `write_latency` clocks after its address and its last data beat have both come, in the
// order writes came, and is answered the next clock: until then a read finds the old data,
// the latest AXI allows. The contents are the beats written, by beat address
// (a table's region may start gigabytes up: Overlay.MemoryRegions); an address never
// written reads as zero, and a beat written all zero is not kept. What the pipeline held in
// flight is forgotten at a reset, the contents are not (the pipeline clears its tables
// itself).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

class AxiMemory {
  public:
    // What the pipeline drives in a clock, sampled before the rising edge: arvalid,
    // awvalid and wvalid where the handshake completes (the slave is always ready).
    struct Master {
        bool arvalid = false;
        uint64_t araddr = 0;
        unsigned arid = 0, arlen = 0;
        bool awvalid = false;
        uint64_t awaddr = 0;
        unsigned awid = 0, awlen = 0;
        bool wvalid = false;
        const uint8_t* wdata = nullptr;  // data_bytes() lanes, lane 0 first
        uint64_t wstrb = 0;
        bool rready = false, bready = false;
    };
    struct Counts {
        uint64_t read_beats = 0, write_beats = 0;
        uint64_t reads_out_max = 0;  // read beats taken and not yet answered, at most
        uint64_t r_stall_clocks = 0; // clocks a due beat waited for the bandwidth
        uint64_t delayed = 0;        // reads the jitter held past `latency`
        uint64_t overtaking = 0;     // reads answered before an older read of another id
    };

    AxiMemory(std::string name, unsigned data_bytes, unsigned latency, unsigned interval,
              unsigned write_latency, unsigned jitter = 0, uint64_t seed = 0);

    const std::string& name() const { return name_; }
    unsigned data_bytes() const { return data_bytes_; }
    const Counts& counts() const { return counts_; }

    // The slave's outputs for clock `t`.
    bool arready() const { return true; }
    bool awready() const { return true; }
    bool wready() const { return true; }
    bool rvalid(uint64_t t) const;
    const uint8_t* rdata() const { return rdata_.data(); }
    unsigned rid() const { return answering_ < reads_.size() ? reads_[answering_].id : 0; }
    bool rlast() const { return answering_ < reads_.size() && reads_[answering_].beats == 1; }
    bool bvalid() const { return !responses_.empty(); }
    unsigned bid() const { return responses_.empty() ? 0 : responses_.front(); }

    // Prepares the outputs of clock `t` (call before driving them).
    void prepare(uint64_t t);
    // The handshakes of clock `t`, as the master drove it.
    void sample(const Master& m, uint64_t t);
    // Drops every read and write in flight.
    void reset();

  private:
    struct Read {
        uint64_t due;
        uint64_t addr;
        unsigned id;
        unsigned beats;
        bool started;  // a beat of it has been answered: the rest follow before any other
    };
    struct Write {
        uint64_t addr;
        unsigned id;
        unsigned beats;
    };
    // A write whose address and data have come, until it lands.
    struct Landing {
        uint64_t due;
        Write write;
        std::vector<std::vector<uint8_t>> beats;
        std::vector<uint64_t> strbs;
    };
    // The read whose beat is due in clock `t` (the earliest due, the oldest of those), or
    // reads_.size().
    size_t due_read(uint64_t t) const;
    void load(uint64_t addr, uint8_t* out);
    void store(uint64_t addr, const uint8_t* data, uint64_t strb);

    std::string name_;
    unsigned data_bytes_, latency_, interval_, write_latency_, jitter_;
    uint64_t rng_;                              // splitmix64 state of the jitter
    std::unordered_map<unsigned, uint64_t> last_due_;  // read id -> its latest read's due
    size_t answering_ = 0;                      // the read prepare() chose, or reads_.size()
    std::unordered_map<uint64_t, std::vector<uint8_t>> beats_;
    std::vector<uint8_t> rdata_;
    std::deque<Read> reads_;                    // in the order their addresses came
    std::deque<Write> writes_;                  // addresses whose data has not all come
    std::deque<std::vector<uint8_t>> wbeats_;   // data beats (with strobes) before their address
    std::deque<uint64_t> wstrbs_;
    std::deque<Landing> landing_;               // writes complete on the bus, oldest first
    std::deque<unsigned> responses_;            // B ids, oldest first
    uint64_t next_answer_ = 0;                  // first clock the next beat may be answered in
    uint64_t reads_out_ = 0;
    Counts counts_;
};
