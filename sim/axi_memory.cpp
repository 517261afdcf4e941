// SPDX-License-Identifier: Apache-2.0
#include "axi_memory.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

AxiMemory::AxiMemory(std::string name, unsigned data_bytes, unsigned latency, unsigned interval,
                     unsigned write_latency)
    : name_(std::move(name)), data_bytes_(data_bytes), latency_(latency),
      interval_(std::max(interval, 1u)), write_latency_(write_latency), rdata_(data_bytes, 0) {
    // Strobes travel as one 64-bit word: a beat of at most 64 lanes (512 bits).
    if (data_bytes == 0 || data_bytes > 64 || (data_bytes & (data_bytes - 1)))
        throw std::invalid_argument("memory port " + name_ + ": " + std::to_string(data_bytes) +
                                    " data bytes, not a power of two up to 64");
}

bool AxiMemory::rvalid(uint64_t t) const {
    return !reads_.empty() && reads_.front().due <= t && t >= next_answer_;
}

void AxiMemory::prepare(uint64_t t) {
    if (rvalid(t)) {
        load(reads_.front().addr, rdata_.data());
    } else {
        if (!reads_.empty() && reads_.front().due <= t) counts_.r_stall_clocks++;
        std::fill(rdata_.begin(), rdata_.end(), 0);
    }
}

void AxiMemory::sample(const Master& m, uint64_t t) {
    // Bursts are INCR of whole beats (what the pipeline's tables issue), so beat k of a
    // burst is at its aligned address plus k beats.
    const uint64_t align = ~uint64_t(data_bytes_ - 1);
    if (rvalid(t) && m.rready) {
        Read& r = reads_.front();
        counts_.read_beats++;
        reads_out_--;
        r.addr += data_bytes_;
        if (--r.beats == 0) reads_.pop_front();
        next_answer_ = t + interval_;
    }
    if (bvalid() && m.bready) responses_.pop_front();
    if (m.arvalid) {
        reads_.push_back(Read{t + latency_, m.araddr & align, m.arid, m.arlen + 1});
        reads_out_ += m.arlen + 1;
        counts_.reads_out_max = std::max(counts_.reads_out_max, reads_out_);
    }
    if (m.awvalid) writes_.push_back(Write{m.awaddr & align, m.awid, m.awlen + 1});
    if (m.wvalid) {
        wbeats_.emplace_back(m.wdata, m.wdata + data_bytes_);
        wstrbs_.push_back(m.wstrb);
    }
    while (!writes_.empty() && wbeats_.size() >= writes_.front().beats) {
        Landing l{t + write_latency_, writes_.front(), {}, {}};
        writes_.pop_front();
        for (unsigned k = 0; k < l.write.beats; k++) {
            l.beats.push_back(std::move(wbeats_.front()));
            l.strbs.push_back(wstrbs_.front());
            wbeats_.pop_front();
            wstrbs_.pop_front();
        }
        landing_.push_back(std::move(l));
    }
    while (!landing_.empty() && landing_.front().due <= t) {
        const Landing& l = landing_.front();
        for (unsigned k = 0; k < l.write.beats; k++) {
            store(l.write.addr + uint64_t(k) * data_bytes_, l.beats[k].data(), l.strbs[k]);
            counts_.write_beats++;
        }
        responses_.push_back(l.write.id);
        landing_.pop_front();
    }
}

void AxiMemory::reset() {
    reads_.clear();
    writes_.clear();
    wbeats_.clear();
    wstrbs_.clear();
    landing_.clear();
    responses_.clear();
    reads_out_ = 0;
    next_answer_ = 0;
}

// The tables read and write whole beats at beat addresses; anything else is taken a byte
// at a time.
void AxiMemory::load(uint64_t addr, uint8_t* out) {
    if (addr % data_bytes_ == 0) {
        auto beat = beats_.find(addr / data_bytes_);
        if (beat == beats_.end()) std::fill(out, out + data_bytes_, 0);
        else std::memcpy(out, beat->second.data(), data_bytes_);
        return;
    }
    for (unsigned i = 0; i < data_bytes_; i++) {
        auto beat = beats_.find((addr + i) / data_bytes_);
        out[i] = beat == beats_.end() ? 0 : beat->second[(addr + i) % data_bytes_];
    }
}

// A beat that holds only zeros is not kept: it reads as one never written, and a table's
// CLEAR (millions of empty buckets at DPU scale) leaves the memory as small as it found it.
void AxiMemory::store(uint64_t addr, const uint8_t* data, uint64_t strb) {
    // The beats the write touches: one when it is aligned, as the tables' writes are.
    for (uint64_t at = addr / data_bytes_; at <= (addr + data_bytes_ - 1) / data_bytes_; at++) {
        auto beat = beats_.find(at);
        bool any = false;  // a non-zero byte to write into this beat
        for (unsigned i = 0; i < data_bytes_; i++)
            any |= (strb >> i & 1) && (addr + i) / data_bytes_ == at && data[i] != 0;
        if (beat == beats_.end()) {
            if (!any) continue;
            beat = beats_.emplace(at, std::vector<uint8_t>(data_bytes_, 0)).first;
        }
        for (unsigned i = 0; i < data_bytes_; i++)
            if ((strb >> i & 1) && (addr + i) / data_bytes_ == at)
                beat->second[(addr + i) % data_bytes_] = data[i];
        if (!any && std::all_of(beat->second.begin(), beat->second.end(), [](uint8_t b) { return b == 0; }))
            beats_.erase(beat);
    }
}

