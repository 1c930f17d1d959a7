// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A small std::expected-style result type for the driver API: no exceptions cross it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace bouncer {

/// What went wrong, coarse enough to switch on, with a message for humans.
enum class Errc : uint8_t {
  kInvalidArgument,  // caller error, nothing was posted
  kRingFull,         // no free slot; retry after polling completions
  kTimeout,          // hardware did not answer in time
  kHardware,         // hardware completed with an error CQE (see Completion)
  kNoDevice,         // backend not available (e.g. no card, no XRT)
  kState,            // operation not allowed in the current state
  kNoMemory,         // DMA buffer allocation failed
  kQueueError,       // a ring is in its queue-error state (QERR); Device::reset_sq/reset_cqp
  kNotSupported,     // the operation does not exist on this device (Cm::accept)
};

const char* errc_name(Errc e);

struct Error {
  Errc code;
  std::string message;
  // For Errc::kHardware: the completion's MAJERR/MINERR (regs::CqMajor/CqMinor), else 0.
  uint16_t hw_major = 0;
  uint16_t hw_minor = 0;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error err) : v_(std::move(err)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  bool has_value() const { return ok(); }  // std::expected's spelling
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error err) : err_(std::move(err)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_{Errc::kInvalidArgument, {}};
  bool ok_ = true;
};

inline Error make_error(Errc code, std::string msg) { return Error{code, std::move(msg)}; }

/// A duration for messages, in the largest unit that keeps it exact up to three decimals:
/// "8 ms", "120 us", "1.5 s", "128 ns".
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace bouncer
