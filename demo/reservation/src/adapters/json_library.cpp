// Boost.JSON's compiled part, header-only style: included in exactly this one translation
// unit (so libboost-json is not needed). Other files include the ordinary headers.
#include <boost/json/src.hpp>
