#include "plan/plan.h"

namespace cfp {

std::string_view provenanceName(Provenance p) {
    switch (p) {
        case Provenance::Modelled: return "modelled";
        case Provenance::Measured: return "measured";
        case Provenance::Mixed: return "mixed";
    }
    return "modelled";
}


}  // namespace cfp
