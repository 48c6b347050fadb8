#pragma once
// The profile DB: an SQLite file that keeps every measurement, keyed by the hardware fingerprint
// (profiler.h) and the segment or op signature, so nothing is measured twice and `cfp plan --db`
// can use the measurements on any machine.
//
// Schema (version kSchemaVersion, in table `meta`):
//   meta(key PRIMARY KEY, value)                 format = "cfp-profile-db", schema_version, created
//   hardware(id, fingerprint UNIQUE, gpu_model, driver, cuda, gpus, nodes, interconnect, nccl,
//            hardware_spec, created, updated)
//   segments(hardware_id, segment_signature, mesh, combination, label, segment_type, model, status,
//            comm, seconds, samples, predicted_seconds, memory_bytes, modelled_comm_seconds, kept,
//            protocol, note, created)  PRIMARY KEY (hardware_id, segment_signature, mesh, combination)
//   ops(hardware_id, signature, description, seconds, samples, comm, updated)
//            PRIMARY KEY (hardware_id, signature)
//   gemm_calibration(hardware_id, dtype, flops, bytes, efficiency)
//   scalar_calibration(hardware_id, name, value)  "hbm_bytes_per_second", "launch_seconds"
//   collective_calibration(hardware_id, link, devices, kind, alpha_seconds, beta_seconds_per_byte)
// Signatures are stored as "0x" + 16 hex digits. The file runs in WAL mode; every write is one
// transaction, so a crash or a cancelled session keeps everything stored before it.
//
// Damage. open() checks that the file is an SQLite database with our `meta` table and a schema it
// knows, and runs PRAGMA quick_check. A file that fails gives profile_db.damaged, whose message
// names the file and says how to start a new DB; OpenMode::StartNew then moves the damaged file
// (and its -wal/-shm companions) aside to FILE.damaged-YYYYmmdd-HHMMSS and creates a new one — the
// old measurements are never deleted. A DB from a newer schema gives profile_db.newer_schema and
// is left untouched.
//
// Error codes: profile_db.io (cannot create or open the file), profile_db.damaged,
// profile_db.newer_schema, profile_db.sql (a statement failed), profile_db.not_found (no such
// fingerprint), profile_db.unavailable (built without SQLite).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "profiler/profiler.h"
#include "util/result.h"

namespace cfp::profiler {

// How a combination's communication was obtained.
enum class CommMode : uint8_t {
    Measured,  // the collectives ran on the mesh through NCCL
    Modelled,  // one rank's compute was measured; communication comes from the α-β model
};
std::string_view commModeName(CommMode m);  // "measured", "modelled"

enum class CombinationStatus : uint8_t {
    Measured,    // the full protocol ran
    Abandoned,   // slower than abandonFactor × the best so far; seconds is a lower bound
    Infeasible,  // out of device memory
    Failed,      // a backend error other than out-of-memory (message in note)
};
std::string_view combinationStatusName(CombinationStatus s);  // "measured", "abandoned", "infeasible", "failed"

struct SegmentRecord {
    std::string segmentSignature;      // "0x…" (SegmentCatalog::TypeInfo::signature)
    std::string mesh;                  // with link classes
    std::string combination;           // "0,2,1,1"
    std::string label;                 // "x:rows | x:cols | …"
    int segmentType = 0;               // type id in the model it was profiled for (informative)
    std::string model;                 // graph name (informative)
    CombinationStatus status = CombinationStatus::Measured;
    CommMode comm = CommMode::Measured;
    double seconds = 0;                // median of the timed rounds (see protocol.h)
    std::vector<double> samples;       // per round, seconds per execution
    double predictedSeconds = 0;       // the cost model's (calibrated when a calibration existed)
    int64_t memoryBytes = 0;           // per device
    double modelledCommSeconds = 0;    // CommMode::Modelled: the communication added to the measured compute
    bool kept = false;                 // among the best by time or by memory of its type
    std::string protocol;              // ProtocolSettings::describe()
    std::string note;
    double created = 0;                // Unix seconds
};

struct OpRecord {
    uint64_t signature = 0;            // opCostSignature
    std::string description;           // "dot bf16 [8x128x768]·[768x2304]"
    double seconds = 0;                // mean over samples
    int64_t samples = 0;
};

struct HardwareRecord {
    int64_t id = 0;
    HardwareFingerprint fingerprint;
    std::string key;                   // fingerprint.key()
    std::string hardwareSpec;          // the spec id it was profiled as (`--hardware`)
    double created = 0, updated = 0;
    int64_t segments = 0, ops = 0;     // rows stored for it
    bool calibrated = false;
};

class ProfileDb {
public:
    static constexpr int kSchemaVersion = 1;

    enum class OpenMode : uint8_t {
        OpenOrCreate,  // create the file when missing; a damaged file is an error
        StartNew,      // move an existing file aside (FILE.damaged-… when damaged, FILE.old-… otherwise) and create a new one
        ReadOnly,      // must exist; nothing is written
    };

    static Result<ProfileDb> open(const std::string& path, OpenMode mode = OpenMode::OpenOrCreate);
    ProfileDb(ProfileDb&&) noexcept;
    ProfileDb& operator=(ProfileDb&&) noexcept;
    ~ProfileDb();

    const std::string& path() const;
    // Where StartNew moved the previous file, or empty.
    const std::string& movedAside() const;

    // The hardware row of `fingerprint`, created when missing; `hardwareSpec` is recorded.
    Result<int64_t> hardwareId(const HardwareFingerprint& fingerprint, const std::string& hardwareSpec);
    Result<std::vector<HardwareRecord>> hardware() const;
    // The fingerprint rows profiled as `hardwareSpec`, most recently updated first.
    Result<std::vector<HardwareRecord>> hardwareFor(const std::string& hardwareSpec) const;
    Result<HardwareRecord> hardwareByKey(const std::string& key) const;

    Status putSegment(int64_t hardwareId, const SegmentRecord& record);
    Result<std::optional<SegmentRecord>> findSegment(int64_t hardwareId, const std::string& segmentSignature,
                                                     const std::string& mesh, const std::string& combination) const;
    // All rows of a fingerprint (and segment signature, when not empty), by signature, mesh, combination.
    Result<std::vector<SegmentRecord>> segments(int64_t hardwareId, const std::string& segmentSignature = {}) const;
    // Marks which combinations of a segment type are kept (the rest of that type's rows: not kept).
    Status setKept(int64_t hardwareId, const std::string& segmentSignature, const std::string& mesh,
                   const std::vector<std::string>& keptCombinations);

    // Merges per-op measurements: a signature already stored becomes the sample-weighted mean.
    Status putOps(int64_t hardwareId, const std::vector<OpRecord>& ops, CommMode comm);
    Result<std::vector<OpRecord>> ops(int64_t hardwareId) const;

    // Merges `calibration` into the fingerprint's: GEMM points by (dtype, flops, bytes), collective
    // fits by (link, devices, kind), HBM bandwidth and launch time when set; the rest stays.
    Status putCalibration(int64_t hardwareId, const CostCalibration& calibration);
    Result<CostCalibration> calibration(int64_t hardwareId) const;

private:
    ProfileDb();
    struct Impl;
    std::unique_ptr<Impl> m;
};

// What `cfp plan --db` takes from a profile DB: the per-op measurements and the calibration of one
// fingerprint — `key` when given, else the most recently updated real (not simulated) one profiled
// as `hardwareSpec`. A simulated fingerprint is taken without `key` only when the DB has no real one
// for the spec (a DB of simulated runs, to try the pipeline; the plan then says SIMULATED), so
// simulated numbers never stand in for measurements a DB holds. Measurements of two fingerprints
// are never mixed. profile_db.not_found (listing what the DB has) when there is none.
struct PlanningMeasurements {
    HardwareRecord hardware;
    std::vector<std::pair<uint64_t, double>> measured;  // op cost signature → seconds
    CostCalibration calibration;
};
Result<PlanningMeasurements> planningMeasurements(const std::string& dbPath, const std::string& hardwareSpec,
                                                  const std::string& key = {});

// Where simulated runs go when `dbPath` is the DB of real measurements: "dir/profile.db" →
// "dir/profile.simulated.db" (a path that already ends in ".simulated.db" is returned as it is).
// ProfilerSession refuses to store simulated measurements in a DB that holds real ones.
std::string simulatedDbPath(const std::string& dbPath);

// Whether this build can open profile DBs (SQLite found at configure time).
bool profileDbAvailable();

}  // namespace cfp::profiler
