// SPDX-License-Identifier: Apache-2.0
#include "axi_memory.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

AxiMemory::AxiMemory(std::string name, unsigned data_bytes, unsigned latency, unsigned interval,
                     unsigned write_latency, unsigned jitter, uint64_t seed)
    : name_(std::move(name)), data_bytes_(data_bytes), latency_(latency),
      interval_(std::max(interval, 1u)), write_latency_(write_latency), jitter_(jitter),
      rng_(seed), rdata_(data_bytes, 0) {
    // Strobes travel as one 64-bit word: a beat of at most 64 lanes (512 bits).
    if (data_bytes == 0 || data_bytes > 64 || (data_bytes & (data_bytes - 1)))
        throw std::invalid_argument("memory port " + name_ + ": " + std::to_string(data_bytes) +
                                    " data bytes, not a power of two up to 64");
}

size_t AxiMemory::due_read(uint64_t t) const {
    // Without jitter every read is due in the order it came; a burst begun is finished.
    if (jitter_ == 0 || reads_.empty() || reads_.front().started)
        return !reads_.empty() && reads_.front().due <= t ? 0 : reads_.size();
    size_t best = reads_.size();
    for (size_t k = 0; k < reads_.size(); k++) {
        const Read& r = reads_[k];
        if (r.started) return k;
        if (r.due <= t && (best == reads_.size() || r.due < reads_[best].due)) best = k;
    }
    return best;
}

bool AxiMemory::rvalid(uint64_t t) const {
    return answering_ < reads_.size() && t >= next_answer_;
}

void AxiMemory::prepare(uint64_t t) {
    answering_ = due_read(t);
    if (rvalid(t)) {
        load(reads_[answering_].addr, rdata_.data());
    } else {
        if (answering_ < reads_.size()) counts_.r_stall_clocks++;
        std::fill(rdata_.begin(), rdata_.end(), 0);
    }
}

void AxiMemory::sample(const Master& m, uint64_t t) {
    // Bursts are INCR of whole beats (what the pipeline's tables issue), so beat k of a
    // burst is at its aligned address plus k beats.
    const uint64_t align = ~uint64_t(data_bytes_ - 1);
    if (rvalid(t) && m.rready) {
        Read& r = reads_[answering_];
        counts_.read_beats++;
        reads_out_--;
        r.addr += data_bytes_;
        if (!r.started && std::any_of(reads_.begin(), reads_.begin() + answering_,
                                      [&](const Read& o) { return o.id != r.id; }))
            counts_.overtaking++;
        r.started = true;
        if (--r.beats == 0) reads_.erase(reads_.begin() + answering_);
        next_answer_ = t + interval_;
        answering_ = reads_.size();
    }
    if (bvalid() && m.bready) responses_.pop_front();
    if (m.arvalid) {
        uint64_t due = t + latency_;
        if (jitter_) {
            // splitmix64 (Steele, Lea, Flood 2014): a seeded draw in [0, jitter].
            uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            due = std::max(due + (z ^ (z >> 31)) % (uint64_t(jitter_) + 1), last_due_[m.arid]);
            last_due_[m.arid] = due;
            counts_.delayed += due > t + latency_;
        }
        reads_.push_back(Read{due, m.araddr & align, m.arid, m.arlen + 1, false});
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
    last_due_.clear();
    answering_ = 0;
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

