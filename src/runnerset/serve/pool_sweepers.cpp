#include "runnerset/serve/pool_sweepers.h"

#include "runnerset/pools/hot/hot_pool_sweeper.h"
#include "runnerset/pools/warm/warm_pool_sweeper.h"

namespace mvr::runnerset {

void AddPoolSweepers(PoolSweeper& sweeper) {
  sweeper.Add<WarmPoolSweeper>();
  sweeper.Add<HotPoolSweeper>();
}

}  // namespace mvr::runnerset
