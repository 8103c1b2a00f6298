// The SLO classes' priorities an admission plugin reads: GIE's defaults
// (critical 4, standard and the default class 3, batch -1, sheddable -2,
// background -3; negative is sheddable), or those the host passes when
// --slo-priorities changed them (blis/config_keys.h).
#pragma once

#include <blis/config_keys.h>
#include <blis/plugin.hpp>

#include <cstdint>

class SloPriorities {
 public:
  explicit SloPriorities(blis::sdk::Context& ctx)
      : critical_(ctx.i64_or(BLIS_KEY_SLO_PRIORITY_CRITICAL, 4)),
        standard_(ctx.i64_or(BLIS_KEY_SLO_PRIORITY_STANDARD, 3)),
        batch_(ctx.i64_or(BLIS_KEY_SLO_PRIORITY_BATCH, -1)),
        sheddable_(ctx.i64_or(BLIS_KEY_SLO_PRIORITY_SHEDDABLE, -2)),
        background_(ctx.i64_or(BLIS_KEY_SLO_PRIORITY_BACKGROUND, -3)) {}

  int64_t of(int32_t slo) const {
    switch (slo) {
      case BLIS_SLO_CRITICAL: return critical_;
      case BLIS_SLO_STANDARD: return standard_;
      case BLIS_SLO_BATCH: return batch_;
      case BLIS_SLO_SHEDDABLE: return sheddable_;
      case BLIS_SLO_BACKGROUND: return background_;
      default: return 3;  // the default class keeps GIE's standard priority (HEAD)
    }
  }
  bool sheddable(int32_t slo) const { return of(slo) < 0; }

 private:
  int64_t critical_, standard_, batch_, sheddable_, background_;
};
