#include "etwh/wake_floor.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <set>

namespace {

using namespace std::chrono_literals;

cpu_set_t current_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
  return mask;
}

// The placements are what make the floor's two values separate figures (wake_floor.h): a
// sample woken on the wrong CPU would mix them again.
TEST(WakeFloor, SameCpuWakesTheSleeperOnTheWakersCpuAndGivesTheMaskBack) {
  const cpu_set_t before = current_mask();
  const etwh::WakeSamples s =
      etwh::measure_futex_wake_floor(50, 20us, etwh::WakePlacement::kSameCpu);
  ASSERT_EQ(s.ns.size(), 50u);
  ASSERT_EQ(s.sleeper_cpus.size(), 50u);
  ASSERT_GE(s.waker_cpu, 0);
  for (const int cpu : s.sleeper_cpus) EXPECT_EQ(cpu, s.waker_cpu);
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(WakeFloor, OtherCpuWakesTheSleeperElsewhereAndGivesTheMaskBack) {
  const cpu_set_t before = current_mask();
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "this thread may use a single CPU";
  const etwh::WakeSamples s =
      etwh::measure_futex_wake_floor(50, 20us, etwh::WakePlacement::kOtherCpu);
  ASSERT_EQ(s.ns.size(), 50u);
  ASSERT_GE(s.waker_cpu, 0);
  const std::set<int> cpus(s.sleeper_cpus.begin(), s.sleeper_cpus.end());
  ASSERT_EQ(cpus.size(), 1u);
  EXPECT_NE(*cpus.begin(), s.waker_cpu);
  EXPECT_TRUE(CPU_ISSET(*cpus.begin(), &before));
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(WakeFloor, OtherCpuOnASingleCpuIsNoSamplesNotAnError) {
  const cpu_set_t before = current_mask();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(::sched_getcpu(), &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  const etwh::WakeSamples s =
      etwh::measure_futex_wake_floor(10, 20us, etwh::WakePlacement::kOtherCpu);
  const cpu_set_t after = current_mask();
  ASSERT_EQ(::sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_TRUE(s.ns.empty());
  EXPECT_EQ(s.waker_cpu, -1);
  EXPECT_TRUE(CPU_EQUAL(&one, &after));
}

TEST(WakeFloor, AnyCpuPinsNothing) {
  const etwh::WakeSamples s = etwh::measure_futex_wake_floor(20, 20us);
  EXPECT_EQ(s.ns.size(), 20u);
  EXPECT_EQ(s.waker_cpu, -1);
  for (const auto ns : s.ns) EXPECT_GT(ns, 0u);
}

}  // namespace
