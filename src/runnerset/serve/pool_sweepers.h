// The pools every composition of the runner set sweeps (`mvr serve`, the warm-pool Lambda
// function, the simulation, the in-process tests): the warm pool's and the hot pool's sweepers,
// added to one PoolSweeper over the core they share (pools/sweep/pool_sweeper.h).
#pragma once

#include "runnerset/pools/sweep/pool_sweeper.h"

namespace mvr::runnerset {

// Adds the warm pool's sweeper, then the hot pool's: each class's warm pool is swept before its
// hot pool.
void AddPoolSweepers(PoolSweeper& sweeper);

}  // namespace mvr::runnerset
