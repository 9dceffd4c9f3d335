import AuthCore
import Foundation
import Testing

struct TokenStoreTests {
    let stored = Fixtures.stored(Fixtures.session())

    @Test func save_writesMode0600_atomically_andLoadsBack() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = TokenStore.file(folder.file("tokens.json"))
        #expect(try store.load() == nil)
        try store.save(stored)
        #expect(try folder.mode("tokens.json") == 0o600)
        #expect(try folder.contents() == ["tokens.json"], "no temporary file left behind")
        #expect(try store.load() == stored)
        var newer = stored
        newer.session.accessToken = Secret("ACCESS-9")
        try store.save(newer)
        #expect(try store.load() == newer)
        #expect(try folder.contents() == ["tokens.json"])
        try store.delete()
        try store.delete()
        #expect(try store.load() == nil)
    }

    @Test func load_groupOrWorldReadableFile_isRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = TokenStore.file(folder.file("tokens.json"))
        try store.save(stored)
        for mode in [0o644, 0o640, 0o604, 0o660] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: folder.file("tokens.json").path)
            #expect(throws: SecureFileError.tooOpen(path: folder.file("tokens.json").path, mode: mode_t(mode))) { try store.load() }
        }
        let message = SecureFileError.tooOpen(path: "/x/tokens.json", mode: 0o644).description
        #expect(message.contains("chmod 600 /x/tokens.json"))
        // Saving replaces the file (rename), so the new one is private again.
        try store.save(stored)
        #expect(try folder.mode("tokens.json") == 0o600)
    }

    @Test func load_fileOfAnotherUser_isRefused() throws {
        guard geteuid() == 0 else { return }  // only root can give a file away
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = TokenStore.file(folder.file("tokens.json"))
        try store.save(stored)
        #expect(chown(folder.file("tokens.json").path, 4242, 4242) == 0)
        #expect(throws: SecureFileError.wrongOwner(path: folder.file("tokens.json").path, uid: 4242)) { try store.load() }
    }

    @Test func load_garbage_isMalformed_notACrash() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try SecureFile.write(Data("{not json".utf8), to: folder.file("tokens.json"))
        #expect(throws: SecureFileError.self) { try TokenStore.file(folder.file("tokens.json")).load() }
        do {
            _ = try TokenStore.file(folder.file("tokens.json")).load()
        } catch {
            guard case .malformed = error else { Issue.record("expected malformed, got \(error)"); return }
        }
    }

    @Test func file_format_isDocumentedJSON() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try TokenStore.file(folder.file("tokens.json")).save(stored)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.file("tokens.json"))) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        #expect(object["provider"] as? String == "oauth")
        #expect(object["access_token"] as? String == "ACCESS-1")
        #expect(object["refresh_token"] as? String == "REFRESH-1")
        #expect(object["expires_at"] as? String == "2023-11-14T23:13:20Z")
        #expect(object["user"] as? String == "alice")
    }
}
