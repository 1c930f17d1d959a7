// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer card capture -d DEVICE -o FILE.pcap`: the card's on-card capture ring (the last
// frames of each port direction, CAP_* registers) as a pcap file, read through the XRT backend
// with plain register accesses (bouncer::read_capture): the core is not opened or reset.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace bouncer::cli {

/// Adds `capture` under `card`. It runs from its own callback and ends the parse with its
/// exit code (0 written, 1 readout or file failed, 2 nothing could run: no card, no XRT, a
/// build without the ring).
void add_card_capture_command(CLI::App& card);

}  // namespace bouncer::cli
