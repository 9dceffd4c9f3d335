import AuthCore
import Foundation
import ServiceKit
import Testing

/// The local provider with the real Argon2id hasher and libsodium random bytes.
@Suite(.serialized)
struct LocalProviderTests {
    func provider(_ folder: TemporaryFolder, clock: ManualClock = ManualClock(), refreshLifetime: Duration = .seconds(3600)) throws -> LocalProvider {
        try LocalProvider(
            usersFile: folder.file("users.json"), hasher: .live, random: .live, clock: .manual(clock), accessLifetime: .seconds(600),
            refreshLifetime: refreshLifetime, scopes: ["identity"])
    }

    @Test func register_login_storesOnlyAnArgon2idHash_andTokenDigests() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let local = try provider(folder, clock: clock)
        try await local.register(username: "alice", password: Secret("correct horse battery"))
        #expect(try folder.mode("users.json") == 0o600)
        let grant = try await local.signIn(username: "alice", password: Secret("correct horse battery"))
        #expect(grant.user == "alice")
        #expect(grant.scopes == ["identity"])
        #expect(grant.expiresAt == clock.now.addingTimeInterval(600))
        #expect(grant.accessToken.revealed.count == 43, "256 bits, base64url")
        #expect(grant.refreshToken?.revealed.count == 43)
        #expect(grant.accessToken != grant.refreshToken)
        let file = try String(contentsOf: folder.file("users.json"), encoding: .utf8)
        #expect(file.contains("$argon2id$"))
        #expect(!file.contains("correct horse"))
        #expect(!file.contains(grant.accessToken.revealed))
        #expect(!file.contains(grant.refreshToken!.revealed))
    }

    @Test func login_wrongPassword_unknownUser_duplicate_andBadInput_areDistinctFailures() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let local = try provider(folder)
        try await local.register(username: "alice", password: Secret("correct horse"))
        await #expect(throws: ProviderFailure.invalidCredentials(user: "alice")) {
            try await local.signIn(username: "alice", password: Secret("correct horsE"))
        }
        await #expect(throws: ProviderFailure.unknownUser("bob")) { try await local.signIn(username: "bob", password: Secret("correct horse")) }
        await #expect(throws: ProviderFailure.userExists("alice")) { try await local.register(username: "alice", password: Secret("another one")) }
        for (name, password) in [("", "long enough"), ("a b", "long enough"), (".hidden", "long enough"), ("bob", "short")] {
            await #expect(throws: ProviderFailure.self) { try await local.register(username: name, password: Secret(password)) }
        }
    }

    @Test func refresh_rotatesTheRefreshToken_andSurvivesARestart() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let local = try provider(folder)
        try await local.register(username: "alice", password: Secret("correct horse"))
        let first = try await local.signIn(username: "alice", password: Secret("correct horse"))
        let restarted = try provider(folder)
        let second = try await restarted.refresh(first.refreshToken!, user: "alice")
        #expect(second.accessToken != first.accessToken)
        #expect(second.refreshToken != first.refreshToken)
        await #expect(throws: ProviderFailure.invalidGrant("unknown or revoked refresh token")) {
            try await restarted.refresh(first.refreshToken!, user: "alice")
        }
    }

    @Test func revoke_thenRefresh_isInvalidGrant() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let local = try provider(folder)
        try await local.register(username: "alice", password: Secret("correct horse"))
        let grant = try await local.signIn(username: "alice", password: Secret("correct horse"))
        let report = await local.revoke(Session(grant: grant).revocable)
        #expect(report == RevocationReport(revoked: ["refresh_token", "access_token"]))
        await #expect(throws: ProviderFailure.self) { try await local.refresh(grant.refreshToken!, user: "alice") }
    }

    @Test func refresh_afterTheRefreshLifetime_isInvalidGrant() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let clock = ManualClock()
        let local = try provider(folder, clock: clock, refreshLifetime: .seconds(100))
        try await local.register(username: "alice", password: Secret("correct horse"))
        let grant = try await local.signIn(username: "alice", password: Secret("correct horse"))
        clock.advance(by: .seconds(101))
        await #expect(throws: ProviderFailure.invalidGrant("the refresh token expired")) {
            try await local.refresh(grant.refreshToken!, user: "alice")
        }
    }

    @Test func usersFile_readableByOthers_isRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try SecureFile.write(Data(#"{"version":1,"users":{}}"#.utf8), to: folder.file("users.json"))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.file("users.json").path)
        #expect(throws: SecureFileError.tooOpen(path: folder.file("users.json").path, mode: 0o644)) { try provider(folder) }
    }
}
