// etwrt: FileTimeToSystemTime (timezoneapi.h), as its reference page says: 100 ns intervals
// since 1601-01-01 UTC into a UTC SYSTEMTIME; 0x8000000000000000 or more fails.
#include <windows.h>

#include <cstdint>

namespace {

// Days since 1601-01-01 to a proleptic Gregorian date (the civil calendar on 400-year cycles;
// 1601 starts one, so the day count is the cycle's own).
void civil_date(std::uint64_t days, WORD& year, WORD& month, WORD& day) {
  const std::uint64_t cycle = days / 146097, in_cycle = days % 146097;
  // Years of the cycle before this day: 365 days a year, one more every 4, not every 100,
  // every 400 again.
  std::uint64_t y = (in_cycle - in_cycle / 1460 + in_cycle / 36524 - in_cycle / 146096) / 365;
  std::uint64_t day_of_year = in_cycle - (365 * y + y / 4 - y / 100);
  y += 1601 + 400 * cycle;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  static const WORD kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  WORD m = 0;
  for (; m < 12; ++m) {
    const WORD length = static_cast<WORD>(kMonthDays[m] + (m == 1 && leap ? 1 : 0));
    if (day_of_year < length) break;
    day_of_year -= length;
  }
  year = static_cast<WORD>(y);
  month = static_cast<WORD>(m + 1);
  day = static_cast<WORD>(day_of_year + 1);
}

}  // namespace

extern "C" BOOL WINAPI FileTimeToSystemTime(const FILETIME* lpFileTime, LPSYSTEMTIME lpSystemTime) {
  if (lpFileTime == nullptr || lpSystemTime == nullptr) {
    SetLastError(ERROR_INVALID_PARAMETER);
    return FALSE;
  }
  const std::uint64_t ticks =
      (static_cast<std::uint64_t>(lpFileTime->dwHighDateTime) << 32) | lpFileTime->dwLowDateTime;
  if (ticks >= 0x8000000000000000ULL) {  // the page: "This value must be less than ..."
    SetLastError(ERROR_INVALID_PARAMETER);
    return FALSE;
  }
  const std::uint64_t kTicksPerDay = 864000000000ULL;
  const std::uint64_t days = ticks / kTicksPerDay, in_day = ticks % kTicksPerDay;
  SYSTEMTIME st{};
  civil_date(days, st.wYear, st.wMonth, st.wDay);
  st.wDayOfWeek = static_cast<WORD>((days + 1) % 7);  // 1601-01-01 was a Monday (1)
  st.wHour = static_cast<WORD>(in_day / 36000000000ULL);
  st.wMinute = static_cast<WORD>(in_day / 600000000 % 60);
  st.wSecond = static_cast<WORD>(in_day / 10000000 % 60);
  st.wMilliseconds = static_cast<WORD>(in_day / 10000 % 1000);
  *lpSystemTime = st;
  return TRUE;
}
