mod init;
