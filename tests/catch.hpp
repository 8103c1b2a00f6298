// The one place tests include Catch2 from, so a move to Catch2 v3 is one edit.
#pragma once
#include <catch2/catch.hpp>
